package io.rdmx.rpc.hadoop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.Proxy;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PrivilegedExceptionAction;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonConfigurationKeys;
import org.apache.hadoop.ipc.Client;
import org.apache.hadoop.ipc.ProtobufRpcEngine2;
import org.apache.hadoop.ipc.ProtocolMetaInfoPB;
import org.apache.hadoop.ipc.RPC;
import org.apache.hadoop.ipc.RdmxIpcBridge;
import org.apache.hadoop.ipc.RemoteException;
import org.apache.hadoop.ipc.TestRpcBase;
import org.apache.hadoop.ipc.TestRpcBase.TestRpcService;
import org.apache.hadoop.ipc.protobuf.ProtocolInfoProtos.GetProtocolSignatureRequestProto;
import org.apache.hadoop.ipc.protobuf.ProtocolInfoProtos.GetProtocolSignatureResponseProto;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcResponseHeaderProto.RpcErrorCodeProto;
import org.apache.hadoop.ipc.protobuf.TestProtos.EchoRequestProto;
import org.apache.hadoop.ipc.protobuf.TestRpcServiceProtos.TestProtobufRpcProto;
import org.apache.hadoop.minikdc.MiniKdc;
import org.apache.hadoop.net.NetUtils;
import org.apache.hadoop.security.AccessControlException;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.thirdparty.protobuf.ServiceException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;

/**
 * The engine under Kerberos, against a real KDC in this JVM ({@link MiniKdc}, Apache Kerby): a secure server opens
 * no rdmx listener, proxies call over Hadoop's own TCP client with SASL (GSSAPI, {@code hadoop.rpc.protection=
 * privacy}), both say so in the log, and a caller without Kerberos credentials is refused by Hadoop's SASL layer
 * without anything going over rdmx.
 *
 * <p>Kerberos is JVM-global in Hadoop ({@link UserGroupInformation}'s configuration and login user are static):
 * the class logs the server's principal in as the login user, a client principal beside it, and resets both
 * afterwards, so the other test classes of this JVM run with simple authentication again. The server and the
 * protocol are Hadoop's own test fixtures ({@code TestRpcBase.TestRpcService}, whose {@code @KerberosInfo} names
 * the server principal key {@code test.ipc.server.principal}); the engine is chosen by {@code rpc.engine.*} only.
 */
@EnabledForJreRange(max = JRE.JAVA_22, disabledReason = HadoopJdk.REASON)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class KerberosFallbackTest {
    /** The server principal key of {@code TestRpcService}'s {@code @KerberosInfo}. */
    private static final String SERVER_PRINCIPAL_KEY = "test.ipc.server.principal";

    private static Path work;
    private static MiniKdc kdc;
    private static String serverPrincipal;
    private static UserGroupInformation alice;
    private static Configuration secure;

    private final List<RPC.Server> servers = new ArrayList<>();
    private final List<Object> proxies = new ArrayList<>();

    @BeforeAll
    static void kdc() throws Exception {
        HadoopJdk.assumeHadoopRuns();
        work = Files.createTempDirectory("rdmx-kdc");
        kdc = new MiniKdc(MiniKdc.createConf(), work.toFile());
        kdc.start();                                        // writes krb5.conf, sets java.security.krb5.conf
        String realm = kdc.getRealm();
        File serverKeytab = work.resolve("server.keytab").toFile();
        File aliceKeytab = work.resolve("alice.keytab").toFile();
        kdc.createPrincipal(serverKeytab, "server/localhost");
        kdc.createPrincipal(aliceKeytab, "alice");
        serverPrincipal = "server/localhost@" + realm;

        secure = new Configuration(false);
        secure.set(CommonConfigurationKeys.HADOOP_SECURITY_AUTHENTICATION, "kerberos");
        secure.set(CommonConfigurationKeys.HADOOP_RPC_PROTECTION, "privacy");
        secure.set(SERVER_PRINCIPAL_KEY, serverPrincipal);
        secure.set("rpc.engine." + TestRpcService.class.getName(), RdmxRpcEngine.class.getName());
        secure.setInt(CommonConfigurationKeys.IPC_CLIENT_CONNECT_MAX_RETRIES_KEY, 0);
        secure.setInt(CommonConfigurationKeys.IPC_CLIENT_CONNECT_MAX_RETRIES_ON_SASL_KEY, 0);
        secure.setInt(CommonConfigurationKeys.IPC_CLIENT_CONNECT_TIMEOUT_KEY, 5000);
        UserGroupInformation.setConfiguration(secure);
        assertTrue(UserGroupInformation.isSecurityEnabled());
        // the server runs as the login user, as a NameNode does
        UserGroupInformation.loginUserFromKeytab(serverPrincipal, serverKeytab.getPath());
        alice = UserGroupInformation.loginUserFromKeytabAndReturnUGI("alice@" + realm, aliceKeytab.getPath());
    }

    @AfterAll
    static void restoreSimpleAuthentication() throws IOException {
        // UGI's configuration, login user and name rules are static: the next test class must see simple
        // authentication and its OS login user again
        UserGroupInformation.reset();
        Configuration simple = new Configuration(false);
        simple.set(CommonConfigurationKeys.HADOOP_SECURITY_AUTHENTICATION, "simple");
        UserGroupInformation.setConfiguration(simple);
        UserGroupInformation.reset();          // the next getCurrentUser() initialises from the default resources
        if (kdc != null) {
            kdc.stop();                        // also clears java.security.krb5.conf
        }
        if (work != null) {
            try (var files = Files.walk(work)) {
                files.sorted(java.util.Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
            }
        }
    }

    @BeforeEach
    void setUp() {
        Endpoints.clear();
    }

    @AfterEach
    void tearDown() {
        for (Object p : proxies) {
            RPC.stopProxy(p);
        }
        for (RPC.Server s : servers) {
            s.stop();
        }
        Endpoints.clear();
    }

    /** A server made the way Hadoop daemons make theirs: RPC.Builder, the engine picked from rpc.engine.*. */
    private RdmxServer secureServer() throws IOException {
        RPC.Server s = new RPC.Builder(secure).setProtocol(TestRpcService.class)
            .setInstance(TestProtobufRpcProto.newReflectiveBlockingService(new TestRpcBase.PBServerImpl()))
            .setBindAddress("localhost").setPort(0).setNumHandlers(2).build();
        servers.add(s);
        RdmxServer r = assertInstanceOf(RdmxServer.class, s, "rpc.engine.* did not select the rdmx engine");
        s.start();
        return r;
    }

    /** A proxy made through RPC.getProxy as {@code user}: the engine comes from rpc.engine.* as well. */
    private TestRpcService proxy(UserGroupInformation user, RPC.Server s, Configuration c) throws Exception {
        InetSocketAddress addr = NetUtils.getConnectAddress(s);
        TestRpcService p = user.doAs((PrivilegedExceptionAction<TestRpcService>) () ->
            RPC.getProxy(TestRpcService.class, 1, addr, c));
        proxies.add(p);
        assertInstanceOf(RdmxInvoker.class, Proxy.getInvocationHandler(p), "not an rdmx engine proxy");
        return p;
    }

    private static String remoteUser(TestRpcService p) throws ServiceException {
        return p.getServerRemoteUser(null, TestRpcBase.newEmptyRequest()).getUser();
    }

    @Test
    void aKerberosCallerIsAuthenticatedOverHadoopsTcpPathAndNothingGoesOverRdmx() throws Exception {
        RdmxServer s = secureServer();
        TestRpcService p = proxy(alice, s, secure);
        long rdmx = RdmxRpcEngine.clientCallsOverRdmx();
        long tcp = RdmxRpcEngine.clientCallsOverTcp();
        long served = RdmxRpcEngine.serverCallsOverRdmx();

        // the handler sees the client's Kerberos principal: SASL/GSSAPI ran on the connection
        assertEquals("alice@" + kdc.getRealm() + " (auth:KERBEROS)", remoteUser(p));
        assertEquals("over kerberos", p.echo(null, EchoRequestProto.newBuilder().setMessage("over kerberos")
            .build()).getMessage());

        assertEquals(2, RdmxRpcEngine.clientCallsOverTcp() - tcp, "both calls went over Hadoop's TCP client");
        assertEquals(0, RdmxRpcEngine.clientCallsOverRdmx() - rdmx, "a call went over rdmx");
        assertEquals(0, RdmxRpcEngine.serverCallsOverRdmx() - served, "a server got a call over rdmx");
        assertEquals(0, s.rdmxCalls());
    }

    @Test
    void theFallbackIsExplicitAndLoggedOnBothSides() throws Exception {
        String log;
        RdmxServer s;
        try (ErrCapture cap = new ErrCapture()) {     // slf4j-simple writes to System.err, looked up per line
            s = secureServer();
            TestRpcService p = proxy(alice, s, secure);
            p.ping(null, TestRpcBase.newEmptyRequest());
            log = cap.text();
        }
        // the server: no rdmx listener, saying why; it advertises nothing on its TCP port
        assertNull(s.rdmxAddress(), "a secure server opened an rdmx listener");
        assertNotNull(s.rdmxOffReason());
        assertTrue(s.rdmxOffReason().contains("Kerberos/SASL"), s.rdmxOffReason());
        assertTrue(log.contains("no rdmx listener (" + s.rdmxOffReason() + "); clients use TCP"), log);
        // the client: every call of the proxy over Hadoop's TCP client, saying why
        assertTrue(log.contains(TestRpcService.class.getName()) || log.contains("testProto"), log);
        assertTrue(log.contains("over Hadoop's TCP client: Kerberos/SASL"), log);
        assertEquals(0, s.rdmxCalls());
    }

    @Test
    void aSecureServerAdvertisesNoRdmxListenerOnItsTcpPort() throws Exception {
        RdmxServer s = secureServer();
        InetSocketAddress addr = NetUtils.getConnectAddress(s);
        // the engine's probe (Endpoints), asked as alice over a Kerberos-authenticated connection: SASL needs the
        // @KerberosInfo of a real protocol, so the metadata proxy rides on TestRpcService's connection id, as
        // Hadoop's RpcClientUtil does
        Client.ConnectionId id = RdmxIpcBridge.connectionId(addr, TestRpcService.class, alice, 0, null, secure);
        ProtocolMetaInfoPB meta = new ProtobufRpcEngine2().getProtocolMetaInfoProxy(id, secure,
            NetUtils.getDefaultSocketFactory(secure)).getProxy();
        try {
            GetProtocolSignatureRequestProto ask = GetProtocolSignatureRequestProto.newBuilder()
                .setProtocol(RdmxEndpoint.NAME).setRpcKind(RPC.RpcKind.RPC_BUILTIN.toString()).build();
            try {
                GetProtocolSignatureResponseProto r = meta.getProtocolSignature(null, ask);
                assertEquals(0, r.getProtocolSignatureCount(), "a secure server advertised an rdmx listener: " + r);
            } catch (ServiceException e) {
                // a stock server's answer: the protocol is unknown (a remote error, not a failed connection)
                assertInstanceOf(RemoteException.class, e.getCause(), chain(e));
            }
            // the same connection serves the protocol itself: the answer above came from an authenticated server
            GetProtocolSignatureResponseProto own = meta.getProtocolSignature(null, GetProtocolSignatureRequestProto
                .newBuilder().setProtocol(RPC.getProtocolName(TestRpcService.class))
                .setRpcKind(RPC.RpcKind.RPC_PROTOCOL_BUFFER.toString()).build());
            assertTrue(own.getProtocolSignatureCount() > 0, own.toString());
        } finally {
            RPC.stopProxy(meta);
        }
        assertNull(s.rdmxAddress());
    }

    @Test
    void aCallerWithoutATicketIsRefusedBySaslAndTheServerKeepsServing() throws Exception {
        RdmxServer s = secureServer();
        long rdmx = RdmxRpcEngine.clientCallsOverRdmx();
        long served = RdmxRpcEngine.serverCallsOverRdmx();
        // a user of this Kerberos-configured JVM without a Kerberos ticket: GSSAPI has no credentials to offer
        UserGroupInformation mallory = UserGroupInformation.createRemoteUser("mallory");
        TestRpcService p = proxy(mallory, s, secure);
        ServiceException e = assertThrows(ServiceException.class, () -> remoteUser(p));
        // Hadoop's SASL negotiation: the server offered KERBEROS only, and mallory has no Kerberos credentials
        assertTrue(causes(e, AccessControlException.class), "not a SASL refusal: " + chain(e));
        assertTrue(chain(e).contains("Client cannot authenticate via:[KERBEROS]"), chain(e));

        assertEquals(0, RdmxRpcEngine.clientCallsOverRdmx() - rdmx, "a call went over rdmx");
        assertEquals(0, RdmxRpcEngine.serverCallsOverRdmx() - served, "a server got a call over rdmx");
        // the server still serves authenticated callers, on a new connection
        assertEquals("alice@" + kdc.getRealm() + " (auth:KERBEROS)", remoteUser(proxy(alice, s, secure)));
    }

    /**
     * A stock client without Kerberos (simple authentication, as in a JVM whose configuration lacks
     * {@code hadoop.security.authentication=kerberos}) against the secure server. Its proxy is not TCP-only: it
     * asks the server's TCP port for an rdmx listener and would use one. The server's SASL layer refuses it.
     * Hadoop's {@code Server} (and {@link RdmxServer}) read the JVM-global security switch once, when made, so the
     * switch is flipped to simple for this caller only and back.
     */
    @Test
    void aSimpleAuthenticationCallerIsRefusedByTheSecureServerAndGetsNoRdmxPath() throws Exception {
        RdmxServer s = secureServer();
        Configuration simple = new Configuration(secure);
        simple.set(CommonConfigurationKeys.HADOOP_SECURITY_AUTHENTICATION, "simple");
        long rdmx = RdmxRpcEngine.clientCallsOverRdmx();
        long served = RdmxRpcEngine.serverCallsOverRdmx();
        ServiceException e;
        UserGroupInformation.setConfiguration(simple);
        try {
            TestRpcService p = proxy(UserGroupInformation.createRemoteUser("mallory"), s, simple);
            e = assertThrows(ServiceException.class, () -> remoteUser(p));
        } finally {
            UserGroupInformation.setConfiguration(secure);
        }
        RemoteException re = assertInstanceOf(RemoteException.class, e.getCause(), chain(e));
        assertEquals(AccessControlException.class.getName(), re.getClassName());
        assertTrue(re.getMessage().contains("SIMPLE authentication is not enabled"), re.getMessage());
        assertEquals(RpcErrorCodeProto.FATAL_UNAUTHORIZED, re.getErrorCode());

        assertEquals(0, RdmxRpcEngine.clientCallsOverRdmx() - rdmx, "a call went over rdmx");
        assertEquals(0, RdmxRpcEngine.serverCallsOverRdmx() - served, "a server got a call over rdmx");
        assertEquals(0, s.rdmxCalls());
        assertNull(s.rdmxAddress());
        assertEquals("alice@" + kdc.getRealm() + " (auth:KERBEROS)", remoteUser(proxy(alice, s, secure)));
    }

    private static boolean causes(Throwable t, Class<? extends Throwable> type) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (type.isInstance(c)) {
                return true;
            }
        }
        return false;
    }

    private static String chain(Throwable t) {
        StringBuilder b = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            b.append(c).append(" <- ");
        }
        return b.toString();
    }

    /** Copies System.err into a buffer while open; the original stream keeps getting everything. */
    private static final class ErrCapture implements AutoCloseable {
        private final PrintStream original = System.err;
        private final ByteArrayOutputStream buf = new ByteArrayOutputStream();

        ErrCapture() {
            System.setErr(new PrintStream(new OutputStream() {
                @Override
                public void write(int b) {
                    original.write(b);
                    synchronized (buf) {
                        buf.write(b);
                    }
                }

                @Override
                public void write(byte[] b, int off, int len) {
                    original.write(b, off, len);
                    synchronized (buf) {
                        buf.write(b, off, len);
                    }
                }
            }, true, StandardCharsets.UTF_8));
        }

        String text() {
            System.err.flush();
            synchronized (buf) {
                return buf.toString(StandardCharsets.UTF_8);
            }
        }

        @Override
        public void close() {
            System.setErr(original);
        }
    }
}
