package io.rdmx.rpc.hadoop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.rpc.RemoteRpcException;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.Proxy;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PrivilegedExceptionAction;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonConfigurationKeys;
import org.apache.hadoop.ipc.Client;
import org.apache.hadoop.ipc.ProtobufRpcEngine2;
import org.apache.hadoop.ipc.ProtocolMetaInfoPB;
import org.apache.hadoop.ipc.RPC;
import org.apache.hadoop.ipc.RdmxIpcBridge;
import org.apache.hadoop.ipc.RemoteException;
import org.apache.hadoop.ipc.Server;
import org.apache.hadoop.ipc.TestRpcBase;
import org.apache.hadoop.ipc.TestRpcBase.TestRpcService;
import org.apache.hadoop.ipc.protobuf.ProtocolInfoProtos.GetProtocolSignatureRequestProto;
import org.apache.hadoop.ipc.protobuf.ProtocolInfoProtos.GetProtocolSignatureResponseProto;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcResponseHeaderProto.RpcErrorCodeProto;
import org.apache.hadoop.ipc.protobuf.TestProtos.EchoRequestProto;
import org.apache.hadoop.ipc.protobuf.TestProtos.EmptyRequestProto;
import org.apache.hadoop.ipc.protobuf.TestProtos.EmptyResponseProto;
import org.apache.hadoop.ipc.protobuf.TestRpcServiceProtos.TestProtobufRpcProto;
import org.apache.hadoop.minikdc.MiniKdc;
import org.apache.hadoop.net.NetUtils;
import org.apache.hadoop.security.AccessControlException;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.authorize.ProxyUsers;
import org.apache.hadoop.thirdparty.protobuf.RpcController;
import org.apache.hadoop.thirdparty.protobuf.ServiceException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The engine under Kerberos, against a real KDC in this JVM ({@link MiniKdc}, Apache Kerby). With
 * {@code hadoop.rpc.protection=authentication} a secure server opens its rdmx listener and a proxy carries Hadoop's
 * SASL negotiation (KERBEROS/GSSAPI) over rdmx before its first call: the calls go over rdmx and the handler sees
 * the caller's Kerberos principal, exactly as on TCP; a caller without credentials or with simple authentication
 * is refused over rdmx as on TCP. With {@code privacy} (integrity and privacy are not carried over rdmx yet) the
 * server opens no rdmx listener and proxies call over Hadoop's own TCP client with SASL, both saying so in the log.
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
    /** The user {@code Server.getRemoteUser()} returned in the server's last ping handler. */
    private static final AtomicReference<UserGroupInformation> PINGED_BY = new AtomicReference<>();

    private static Path work;
    private static MiniKdc kdc;
    private static String serverPrincipal;
    private static UserGroupInformation alice;
    /** Kerberos, protection=authentication: carried over rdmx. */
    private static Configuration secure;
    /** Kerberos, protection=privacy: Hadoop's TCP path. */
    private static Configuration privacy;

    private final Started started = new Started();

    /** Hadoop's test protocol, recording who each ping came from as the handler sees it. */
    private static final class RecordingServerImpl extends TestRpcBase.PBServerImpl {
        @Override
        public EmptyResponseProto ping(RpcController unused, EmptyRequestProto request) throws ServiceException {
            PINGED_BY.set(Server.getRemoteUser());
            return super.ping(unused, request);
        }
    }

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
        secure.set(CommonConfigurationKeys.HADOOP_RPC_PROTECTION, "authentication");
        secure.set(SERVER_PRINCIPAL_KEY, serverPrincipal);
        secure.set("rpc.engine." + TestRpcService.class.getName(), RdmxRpcEngine.class.getName());
        secure.setInt(CommonConfigurationKeys.IPC_CLIENT_CONNECT_MAX_RETRIES_KEY, 0);
        secure.setInt(CommonConfigurationKeys.IPC_CLIENT_CONNECT_MAX_RETRIES_ON_SASL_KEY, 0);
        secure.setInt(CommonConfigurationKeys.IPC_CLIENT_CONNECT_TIMEOUT_KEY, 5000);
        privacy = new Configuration(secure);
        privacy.set(CommonConfigurationKeys.HADOOP_RPC_PROTECTION, "privacy");
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
        started.stopAll();
        Endpoints.clear();
    }

    /** A server made the way Hadoop daemons make theirs: RPC.Builder, the engine picked from rpc.engine.*. */
    private RdmxServer secureServer() throws IOException {
        return secureServer(secure);
    }

    private RdmxServer secureServer(Configuration conf) throws IOException {
        RPC.Server s = new RPC.Builder(conf).setProtocol(TestRpcService.class)
            .setInstance(TestProtobufRpcProto.newReflectiveBlockingService(new RecordingServerImpl()))
            .setBindAddress("localhost").setPort(0).setNumHandlers(2).build();
        started.server(s);
        RdmxServer r = assertInstanceOf(RdmxServer.class, s, "rpc.engine.* did not select the rdmx engine");
        s.start();
        return r;
    }

    /** A proxy made through RPC.getProxy as {@code user}: the engine comes from rpc.engine.* as well. */
    private TestRpcService proxy(UserGroupInformation user, RPC.Server s, Configuration c) throws Exception {
        InetSocketAddress addr = NetUtils.getConnectAddress(s);
        TestRpcService p = user.doAs((PrivilegedExceptionAction<TestRpcService>) () ->
            RPC.getProxy(TestRpcService.class, 1, addr, c));
        started.proxy(p);
        assertInstanceOf(RdmxInvoker.class, Proxy.getInvocationHandler(p), "not an rdmx engine proxy");
        return p;
    }

    private static String remoteUser(TestRpcService p) throws ServiceException {
        return p.getServerRemoteUser(null, TestRpcBase.newEmptyRequest()).getUser();
    }

    @Test
    void aKerberosCallerIsAuthenticatedBySaslOverRdmxAndItsCallsGoOverRdmx() throws Exception {
        RdmxServer s = secureServer();
        assertNotNull(s.rdmxAddress(), "a Kerberized server with protection=authentication opened no rdmx listener: "
            + s.rdmxOffReason());
        TestRpcService p = proxy(alice, s, secure);
        long rdmx = RdmxRpcEngine.clientCallsOverRdmx();
        long tcp = RdmxRpcEngine.clientCallsOverTcp();
        long sessions = RdmxRpcEngine.clientSaslSessionsOverRdmx();
        PINGED_BY.set(null);

        p.ping(null, TestRpcBase.newEmptyRequest());
        // the handler's Server.getRemoteUser(): the Kerberos principal SASL authenticated, as a stock server has it
        UserGroupInformation remote = PINGED_BY.get();
        assertNotNull(remote, "the ping handler saw no remote user");
        assertEquals("alice", remote.getShortUserName());
        assertEquals("alice@" + kdc.getRealm(), remote.getUserName());
        assertEquals(UserGroupInformation.AuthenticationMethod.KERBEROS, remote.getAuthenticationMethod());
        assertNull(remote.getRealUser());
        assertEquals("alice@" + kdc.getRealm() + " (auth:KERBEROS)", remoteUser(p));
        assertEquals("over kerberos", p.echo(null, EchoRequestProto.newBuilder().setMessage("over kerberos")
            .build()).getMessage());

        assertEquals(3, RdmxRpcEngine.clientCallsOverRdmx() - rdmx, "the calls did not all go over rdmx");
        assertEquals(0, RdmxRpcEngine.clientCallsOverTcp() - tcp, "a call went over Hadoop's TCP client");
        assertEquals(3, s.rdmxCalls(), "the server did not get the calls over rdmx");
        // one negotiation for the proxy, before its first call
        assertEquals(1, RdmxRpcEngine.clientSaslSessionsOverRdmx() - sessions);
        assertEquals(1, s.rdmxSaslSessions());
    }

    /** Kerberos with {@code hadoop.rpc.protection} = {@code protection}. */
    private static Configuration protection(String protection) {
        Configuration c = new Configuration(secure);
        c.set(CommonConfigurationKeys.HADOOP_RPC_PROTECTION, protection);
        return c;
    }

    @Test
    void withProtectionIntegrityCallsAndAnswersAreWrappedOverRdmx() throws Exception {
        wrappedCallsGoOverRdmx(protection("integrity"), "auth-int");
    }

    @Test
    void withProtectionPrivacyCallsAndAnswersAreEncryptedOverRdmx() throws Exception {
        wrappedCallsGoOverRdmx(privacy, "auth-conf");
    }

    /**
     * The calls of a proxy go over rdmx in a session of the given QOP, each call and answer wrapped (the tokens are
     * not the plain bytes: the echoed text is not in the wrapped request under privacy).
     */
    private void wrappedCallsGoOverRdmx(Configuration c, String qop) throws Exception {
        RdmxServer s = secureServer(c);
        assertNotNull(s.rdmxAddress(), "protection " + qop + ": no rdmx listener: " + s.rdmxOffReason());
        TestRpcService p = proxy(alice, s, c);
        long rdmx = RdmxRpcEngine.clientCallsOverRdmx();
        long tcp = RdmxRpcEngine.clientCallsOverTcp();
        List<byte[]> sent = new java.util.concurrent.CopyOnWriteArrayList<>();
        RdmxInvoker.wrappedRequestHook = t -> {
            sent.add(t.clone());
            return t;
        };
        String text = "secret-text-" + qop;
        try {
            assertEquals("alice@" + kdc.getRealm() + " (auth:KERBEROS)", remoteUser(p));
            assertEquals(text, p.echo(null, EchoRequestProto.newBuilder().setMessage(text).build()).getMessage());
        } finally {
            RdmxInvoker.wrappedRequestHook = null;
        }
        assertEquals(2, RdmxRpcEngine.clientCallsOverRdmx() - rdmx, "the calls did not go over rdmx");
        assertEquals(0, RdmxRpcEngine.clientCallsOverTcp() - tcp, "a call went over TCP");
        assertEquals(2, s.rdmxCalls());
        assertEquals(2, sent.size(), "the calls were not wrapped");
        boolean plainVisible = new String(sent.get(1), StandardCharsets.ISO_8859_1).contains(text);
        assertEquals(!"auth-conf".equals(qop), plainVisible, "privacy must hide the request, integrity does not");
    }

    /**
     * Concurrent callers of one proxy share its privacy session: the client wraps and sends its calls in sequence
     * and the server unwraps them in arrival order (Kerberos tokens carry sequence numbers the JDK checks), with
     * each dispatch of the listener; every call goes through over rdmx in that one session.
     */
    @ParameterizedTest
    @ValueSource(strings = {"queue", "direct", "reader"})
    void concurrentCallersOfOnePrivacySessionAllGoThrough(String dispatch) throws Exception {
        Configuration c = new Configuration(privacy);
        c.set("rdmx.rpc.hadoop.dispatch", dispatch);
        RdmxServer s = secureServer(c);
        TestRpcService p = proxy(alice, s, c);
        p.ping(null, TestRpcBase.newEmptyRequest());
        int threads = 4;
        int calls = 200;
        long tcp = RdmxRpcEngine.clientCallsOverTcp();
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(threads);
        try {
            List<java.util.concurrent.Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int id = t;
                done.add(pool.submit(() -> alice.doAs((PrivilegedExceptionAction<Void>) () -> {
                    for (int i = 0; i < calls; i++) {
                        String m = "t" + id + "-" + i;
                        assertEquals(m, p.echo(null, EchoRequestProto.newBuilder().setMessage(m).build())
                            .getMessage());
                    }
                    return null;
                })));
            }
            for (java.util.concurrent.Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(1, s.rdmxSaslSessions(), "dispatch " + dispatch + ": a session failed and was negotiated again");
        assertEquals(1 + threads * calls, s.rdmxCalls(), "dispatch " + dispatch + ": not every call went over rdmx");
        assertEquals(tcp, RdmxRpcEngine.clientCallsOverTcp());
    }

    /**
     * A wrapped call tampered with on the way is refused by the server's SASL unwrap, naming the caller; that
     * session only is over (another proxy's session keeps working), and the tampered proxy's next call negotiates
     * a new session and goes through. A tampered answer fails the call at the client the same way.
     */
    @Test
    void aTamperedWrappedCallOrAnswerIsRefusedAndEndsThatSessionOnly() throws Exception {
        RdmxServer s = secureServer(privacy);
        TestRpcService victim = proxy(alice, s, privacy);
        TestRpcService other = proxy(alice, s, privacy);
        victim.ping(null, TestRpcBase.newEmptyRequest());
        other.ping(null, TestRpcBase.newEmptyRequest());
        assertEquals(2, s.rdmxSaslSessions(), "the privacy sessions were not negotiated over rdmx");
        long served = s.rdmxCalls();
        RdmxInvoker.wrappedRequestHook = t -> {
            t[t.length / 2] ^= 1;
            return t;
        };
        ServiceException e;
        try {
            e = assertThrows(ServiceException.class, () -> victim.ping(null, TestRpcBase.newEmptyRequest()));
        } finally {
            RdmxInvoker.wrappedRequestHook = null;
        }
        RemoteException re = assertInstanceOf(RemoteException.class, e.getCause(), chain(e));
        assertEquals(javax.security.sasl.SaslException.class.getName(), re.getClassName(), chain(e));
        assertTrue(re.getMessage().contains("did not unwrap") && re.getMessage().contains("rdmx caller '"),
            re.getMessage());
        assertEquals(served, s.rdmxCalls(), "the server ran a tampered call");
        other.ping(null, TestRpcBase.newEmptyRequest());              // its session is untouched
        assertEquals(2, s.rdmxSaslSessions(), "the other proxy had to negotiate again");
        victim.ping(null, TestRpcBase.newEmptyRequest());             // a new session
        assertEquals(3, s.rdmxSaslSessions(), "the tampered session was not ended");

        RdmxInvoker.wrappedAnswerHook = t -> {
            t[t.length / 2] ^= 1;
            return t;
        };
        try {
            e = assertThrows(ServiceException.class, () -> victim.ping(null, TestRpcBase.newEmptyRequest()));
        } finally {
            RdmxInvoker.wrappedAnswerHook = null;
        }
        assertTrue(causes(e, javax.security.sasl.SaslException.class), chain(e));
        assertTrue(chain(e).contains("did not unwrap"), chain(e));
        victim.ping(null, TestRpcBase.newEmptyRequest());             // negotiates again after the bad answer
        assertEquals(4, s.rdmxSaslSessions(), "the client kept a session whose answer did not unwrap");
    }

    /**
     * A wrapped call longer than {@code ipc.maximum.data.length} (plus the session id and the wrapping's allowance)
     * is refused on its first fragment, before the server reassembles or unwraps it, with an error naming the caller,
     * the size and the limit; the server runs nothing of it and serves another proxy on.
     */
    @Test
    void aWrappedCallLongerThanTheServerTakesIsRefusedOnItsFirstFragment() throws Exception {
        Configuration c = new Configuration(privacy);
        c.setInt(CommonConfigurationKeys.IPC_MAXIMUM_DATA_LENGTH, 64 << 10);
        RdmxServer s = secureServer(c);
        assertNotNull(s.rdmxAddress(), s.rdmxOffReason());
        TestRpcService p = proxy(alice, s, c);
        p.ping(null, TestRpcBase.newEmptyRequest());
        assertEquals(1, s.rdmxSaslSessions(), "the privacy session was not negotiated over rdmx");
        long served = s.rdmxCalls();
        String big = "x".repeat(256 << 10);
        ServiceException e = assertThrows(ServiceException.class,
            () -> p.echo(null, EchoRequestProto.newBuilder().setMessage(big).build()));
        assertTrue(chain(e).contains("Wrapped call of") && chain(e).contains("ipc.maximum.data.length " + (64 << 10))
            && chain(e).contains("rdmx caller '"), chain(e));
        assertEquals(served, s.rdmxCalls(), "the server ran a call longer than it takes");
        TestRpcService other = proxy(alice, s, c);
        assertEquals("small", other.echo(null, EchoRequestProto.newBuilder().setMessage("small").build())
            .getMessage());
    }

    @Test
    void aSecureServerAdvertisesItsListenerOnItsTcpPortWithEveryProtection() throws Exception {
        assertEquals(1, advertised(secureServer(secure), secure), "protection=authentication: no listener advertised");
        assertEquals(1, advertised(secureServer(privacy), privacy), "protection=privacy: no listener advertised");
    }

    /** The engine's probe (Endpoints), asked as alice over a Kerberos-authenticated TCP connection. */
    private int advertised(RdmxServer s, Configuration c) throws Exception {
        InetSocketAddress addr = NetUtils.getConnectAddress(s);
        // SASL needs the @KerberosInfo of a real protocol, so the metadata proxy rides on TestRpcService's
        // connection id, as Hadoop's RpcClientUtil (and the engine's probe) does
        Client.ConnectionId id = RdmxIpcBridge.connectionId(addr, TestRpcService.class, alice, 0, null, c);
        ProtocolMetaInfoPB meta = new ProtobufRpcEngine2().getProtocolMetaInfoProxy(id, c,
            NetUtils.getDefaultSocketFactory(c)).getProxy();
        try {
            GetProtocolSignatureRequestProto ask = GetProtocolSignatureRequestProto.newBuilder()
                .setProtocol(RdmxEndpoint.NAME).setRpcKind(RPC.RpcKind.RPC_BUILTIN.toString()).build();
            int n;
            try {
                n = meta.getProtocolSignature(null, ask).getProtocolSignatureCount();
            } catch (ServiceException e) {
                // a stock server's answer: the protocol is unknown (a remote error, not a failed connection)
                assertInstanceOf(RemoteException.class, e.getCause(), chain(e));
                n = 0;
            }
            // the same connection serves the protocol itself: the answer above came from an authenticated server
            GetProtocolSignatureResponseProto own = meta.getProtocolSignature(null, GetProtocolSignatureRequestProto
                .newBuilder().setProtocol(RPC.getProtocolName(TestRpcService.class))
                .setRpcKind(RPC.RpcKind.RPC_PROTOCOL_BUFFER.toString()).build());
            assertTrue(own.getProtocolSignatureCount() > 0, own.toString());
            return n;
        } finally {
            RPC.stopProxy(meta);
        }
    }

    @Test
    void aCallerWithoutATicketIsRefusedOverRdmxAsOnTcpAndTheServerKeepsServing() throws Exception {
        RdmxServer s = secureServer();
        // alice's proxy learns the server's rdmx listener (JVM-wide, per server address)
        assertEquals("alice@" + kdc.getRealm() + " (auth:KERBEROS)", remoteUser(proxy(alice, s, secure)));
        long tcp = RdmxRpcEngine.clientCallsOverTcp();
        long refused = RdmxRpcEngine.clientSaslRefusedOverRdmx();
        long served = s.rdmxCalls();
        // a user of this Kerberos-configured JVM without a Kerberos ticket: GSSAPI has no credentials to offer
        UserGroupInformation mallory = UserGroupInformation.createRemoteUser("mallory");
        TestRpcService p = proxy(mallory, s, secure);
        ServiceException e = assertThrows(ServiceException.class, () -> remoteUser(p));
        assertEquals(0, RdmxRpcEngine.clientCallsOverTcp() - tcp, "the caller was refused over TCP, not rdmx");
        assertEquals(1, RdmxRpcEngine.clientSaslRefusedOverRdmx() - refused, "no SASL refusal over rdmx");
        // Hadoop's own SASL client: the server offered KERBEROS only, and mallory has no Kerberos credentials
        assertTrue(causes(e, AccessControlException.class), "not a SASL refusal: " + chain(e));
        assertTrue(chain(e).contains("Client cannot authenticate via:[KERBEROS]"), chain(e));
        assertEquals(served, s.rdmxCalls(), "the server ran a call of a caller without a ticket");

        // the stock engine over TCP refuses the same caller with the same exception and words
        Configuration stock = new Configuration(secure);
        InetSocketAddress addr = NetUtils.getConnectAddress(s);
        // RPC caches one engine per protocol for the JVM: the stock engine is made here
        TestRpcService viaTcp = new ProtobufRpcEngine2().getProxy(TestRpcService.class, 1, addr, mallory, stock,
            NetUtils.getDefaultSocketFactory(stock), 0, null).getProxy();
        started.proxy(viaTcp);
        ServiceException onTcp = assertThrows(ServiceException.class, () -> remoteUser(viaTcp));
        assertTrue(causes(onTcp, AccessControlException.class), chain(onTcp));
        assertTrue(chain(onTcp).contains("Client cannot authenticate via:[KERBEROS]"), chain(onTcp));

        // the server still serves authenticated callers over rdmx
        assertEquals("alice@" + kdc.getRealm() + " (auth:KERBEROS)", remoteUser(proxy(alice, s, secure)));
        assertTrue(s.rdmxCalls() > served);
    }

    /**
     * A stock client without Kerberos (simple authentication, as in a JVM whose configuration lacks
     * {@code hadoop.security.authentication=kerberos}) against the secure server. Its proxy learns the server's rdmx
     * listener (known in this JVM from alice's proxy: a client that cannot authenticate to the TCP port cannot ask it,
     * but anyone who knows the listener's address can call it) and calls it without SASL; the listener refuses it
     * as a stock server refuses a SIMPLE connection.
     * Hadoop's {@code Server} (and {@link RdmxServer}) read the JVM-global security switch once, when made, so the
     * switch is flipped to simple for this caller only and back.
     */
    @Test
    void aSimpleAuthenticationCallerIsRefusedOverRdmxAsTheStockServerRefusesIt() throws Exception {
        RdmxServer s = secureServer();
        assertEquals("alice@" + kdc.getRealm() + " (auth:KERBEROS)", remoteUser(proxy(alice, s, secure)));
        long served = s.rdmxCalls();
        Configuration simple = new Configuration(secure);
        simple.set(CommonConfigurationKeys.HADOOP_SECURITY_AUTHENTICATION, "simple");
        long rdmx = RdmxRpcEngine.clientCallsOverRdmx();
        long tcp = RdmxRpcEngine.clientCallsOverTcp();
        ServiceException e;
        UserGroupInformation.setConfiguration(simple);
        try {
            TestRpcService p = proxy(UserGroupInformation.createRemoteUser("mallory"), s, simple);
            e = assertThrows(ServiceException.class, () -> remoteUser(p));
        } finally {
            UserGroupInformation.setConfiguration(secure);
        }
        assertEquals(1, RdmxRpcEngine.clientCallsOverRdmx() - rdmx, "the refused call did not go over rdmx");
        assertEquals(0, RdmxRpcEngine.clientCallsOverTcp() - tcp, "the call went over TCP");
        RemoteException re = assertInstanceOf(RemoteException.class, e.getCause(), chain(e));
        assertEquals(AccessControlException.class.getName(), re.getClassName());
        assertTrue(re.getMessage().contains("SIMPLE authentication is not enabled.  Available:[KERBEROS]"),
            re.getMessage());
        assertEquals(RpcErrorCodeProto.FATAL_UNAUTHORIZED, re.getErrorCode());
        assertEquals(served, s.rdmxCalls(), "the server ran the call");
        assertEquals("alice@" + kdc.getRealm() + " (auth:KERBEROS)", remoteUser(proxy(alice, s, secure)));
    }

    /**
     * A proxy user whose real user is the Kerberos caller: SASL authenticates the real user over rdmx, the call runs
     * as the proxy user the connection context names, and the proxy-user rules are checked as on a stock server
     * (the same user, and the same refusal, as the stock engine over TCP).
     */
    @Test
    void aProxyUserOfAKerberosCallerRunsAsItOverRdmxAndTheProxyRulesRefuseOthersAsOnTcp() throws Exception {
        RdmxServer s = secureServer();
        Configuration rules = new Configuration(false);
        rules.set("hadoop.proxyuser.alice.hosts", "*");
        rules.set("hadoop.proxyuser.alice.users", "bob");
        ProxyUsers.refreshSuperUserGroupsConfiguration(rules);
        try {
            UserGroupInformation bob = UserGroupInformation.createProxyUser("bob", alice);
            long rdmx = RdmxRpcEngine.clientCallsOverRdmx();
            long tcp = RdmxRpcEngine.clientCallsOverTcp();
            String overRdmx = remoteUser(proxy(bob, s, secure));
            assertEquals(1, RdmxRpcEngine.clientCallsOverRdmx() - rdmx, "the proxy user's call did not go over rdmx");
            assertEquals(0, RdmxRpcEngine.clientCallsOverTcp() - tcp);
            assertEquals("bob (auth:PROXY) via alice@" + kdc.getRealm() + " (auth:KERBEROS)", overRdmx);
            assertEquals(remoteUser(stockProxy(bob, s)), overRdmx, "not the user the stock server sees");

            UserGroupInformation carol = UserGroupInformation.createProxyUser("carol", alice);
            ServiceException e = assertThrows(ServiceException.class, () -> remoteUser(proxy(carol, s, secure)));
            ServiceException onTcp = assertThrows(ServiceException.class, () -> remoteUser(stockProxy(carol, s)));
            RemoteException re = assertInstanceOf(RemoteException.class, e.getCause(), chain(e));
            RemoteException stock = assertInstanceOf(RemoteException.class, onTcp.getCause(), chain(onTcp));
            assertEquals(stock.getClassName(), re.getClassName());
            assertTrue(re.getMessage().contains("alice@" + kdc.getRealm() + " is not allowed to impersonate carol"),
                re.getMessage());
            assertTrue(stock.getMessage().contains(re.getMessage()), stock.getMessage() + " / " + re.getMessage());
        } finally {
            ProxyUsers.refreshSuperUserGroupsConfiguration(new Configuration(false));
        }
    }

    /** A proxy of Hadoop's own engine (RPC caches one engine per protocol for the JVM: made here). */
    private TestRpcService stockProxy(UserGroupInformation user, RPC.Server s) throws IOException {
        TestRpcService p = new ProtobufRpcEngine2().getProxy(TestRpcService.class, 1, NetUtils.getConnectAddress(s),
            user, secure, NetUtils.getDefaultSocketFactory(secure), 0, null).getProxy();
        started.proxy(p);
        return p;
    }

    /**
     * The server keeps at most {@link RdmxServer#SASL_SESSIONS_PER_CALLER} sessions per caller: one more proxy's
     * negotiation makes it forget the least recently used session, and that proxy's next call, refused as naming
     * an unknown session, negotiates again (once) and goes through over rdmx.
     */
    @Test
    void aSessionTheServerForgotBeyondItsBoundIsNegotiatedAgainAndTheCallGoesThrough() throws Exception {
        RdmxServer s = secureServer();
        TestRpcService first = proxy(alice, s, secure);
        first.ping(null, TestRpcBase.newEmptyRequest());
        for (int i = 0; i < RdmxServer.SASL_SESSIONS_PER_CALLER; i++) {
            proxy(alice, s, secure).ping(null, TestRpcBase.newEmptyRequest());
        }
        assertEquals(RdmxServer.SASL_SESSIONS_PER_CALLER + 1, s.rdmxSaslSessions());
        long rdmx = RdmxRpcEngine.clientCallsOverRdmx();
        long tcp = RdmxRpcEngine.clientCallsOverTcp();
        PINGED_BY.set(null);
        first.ping(null, TestRpcBase.newEmptyRequest());       // its session was forgotten
        assertEquals(RdmxServer.SASL_SESSIONS_PER_CALLER + 2, s.rdmxSaslSessions(), "no second negotiation");
        assertEquals(1, RdmxRpcEngine.clientCallsOverRdmx() - rdmx);
        assertEquals(0, RdmxRpcEngine.clientCallsOverTcp() - tcp);
        assertEquals("alice@" + kdc.getRealm(), PINGED_BY.get().getUserName());
    }

    /**
     * What a peer sends is bounded: a SASL message over {@link RdmxServer#SASL_MAX_BYTES} is refused before it is
     * reassembled, naming the peer and the size; a call naming a session the server does not have is refused.
     */
    @Test
    void aSaslMessageOverTheBoundAndACallOfAnUnknownSessionAreRefusedOverRdmx() throws Exception {
        RdmxServer s = secureServer();
        assertNotNull(s.rdmxAddress(), s.rdmxOffReason());
        RdmxClients.Shared c = RdmxClients.acquire("tcp", HadoopRdmxConfig.of(secure).ringBytes, 16 << 20,
            HadoopRdmxConfig.of(secure));
        try {
            ByteBuffer big = ByteBuffer.allocate(RdmxServer.SASL_MAX_BYTES + 1);
            RemoteRpcException tooLarge = assertThrows(RemoteRpcException.class, () ->
                c.client.call(s.rdmxAddress(), RdmxServer.METHOD_SASL, big, Duration.ofSeconds(30)));
            assertTrue(tooLarge.remoteMessage().contains(String.valueOf(RdmxServer.SASL_MAX_BYTES + 1))
                && tooLarge.remoteMessage().contains("SASL message"), tooLarge.remoteMessage());
            // a session id the server never made, an empty host and an empty connection context
            ByteBuffer call = ByteBuffer.allocate(SaslSession.ID_BYTES + 3).put(0, (byte) 7);
            RemoteRpcException unknown = assertThrows(RemoteRpcException.class, () ->
                c.client.call(s.rdmxAddress(), RdmxServer.METHOD_SECURE_CALL, call, Duration.ofSeconds(30)));
            assertEquals(UnknownSaslSessionException.class.getName(), unknown.className(), unknown.toString());
        } finally {
            RdmxClients.release(c);
        }
        assertEquals(0, s.rdmxCalls());
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
