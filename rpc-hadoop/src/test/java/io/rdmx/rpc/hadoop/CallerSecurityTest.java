package io.rdmx.rpc.hadoop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Proxy;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.security.PrivilegedExceptionAction;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonConfigurationKeys;
import org.apache.hadoop.ipc.ProtocolMetaInfoPB;
import org.apache.hadoop.ipc.RPC;
import org.apache.hadoop.ipc.RemoteException;
import org.apache.hadoop.ipc.Server;
import org.apache.hadoop.ipc.TestRpcBase;
import org.apache.hadoop.ipc.TestRpcBase.TestRpcService;
import org.apache.hadoop.ipc.protobuf.TestProtos.EchoRequestProto;
import org.apache.hadoop.ipc.protobuf.TestProtos.EchoResponseProto;
import org.apache.hadoop.ipc.protobuf.TestProtos.EmptyRequestProto;
import org.apache.hadoop.ipc.protobuf.TestProtos.EmptyResponseProto;
import org.apache.hadoop.ipc.protobuf.TestRpcServiceProtos.TestProtobufRpcProto;
import org.apache.hadoop.net.NetUtils;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.alias.CredentialProvider;
import org.apache.hadoop.security.alias.CredentialProviderFactory;
import org.apache.hadoop.security.authorize.AuthorizationException;
import org.apache.hadoop.security.authorize.PolicyProvider;
import org.apache.hadoop.security.authorize.ProxyUsers;
import org.apache.hadoop.security.authorize.Service;
import org.apache.hadoop.thirdparty.protobuf.BlockingService;
import org.apache.hadoop.thirdparty.protobuf.RpcController;
import org.apache.hadoop.thirdparty.protobuf.ServiceException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hadoop's caller identity over rdmx in simple mode (issue 38): the caller's address is the one its connection
 * really comes from, never the host its request names; authorization is re-evaluated after a refresh of the
 * service ACLs or proxy-user rules; {@code ipc.maximum.data.length} is enforced before a request is reassembled;
 * a full call queue does not stop the rdmx reader; the rdmx secret comes from Hadoop's credential providers.
 */
@EnabledForJreRange(max = JRE.JAVA_22, disabledReason = HadoopJdk.REASON)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CallerSecurityTest {
    /** The service ACL key of Hadoop's test protocol in {@link #POLICY}. */
    private static final String ACL = "security.rdmx.test.protocol.acl";
    /** A host no test process runs on: what a lying client claims to be. */
    private static final String FORGED = "10.9.8.7";
    private static final PolicyProvider POLICY = new PolicyProvider() {
        @Override
        public Service[] getServices() {
            // the metadata protocol a client asks for the rdmx listener (over TCP): unlisted, Hadoop refuses it
            // under service authorization and the client stays on TCP; its ACL key is unset, so everyone
            return new Service[] {new Service(ACL, TestRpcService.class),
                new Service("security.rdmx.test.meta.acl", ProtocolMetaInfoPB.class)};
        }
    };

    private final Started started = new Started();
    private Configuration conf;

    @BeforeAll
    static void hadoop() {
        HadoopJdk.assumeHadoopRuns();
    }

    @BeforeEach
    void setUp() {
        Endpoints.clear();
        conf = Started.clientConf();
    }

    @AfterEach
    void tearDown() {
        started.stopAll();
        ProxyUsers.refreshSuperUserGroupsConfiguration(new Configuration(false));
    }

    /** Records {@code Server.getRemoteIp()} of each ping; {@code echo("block")} waits for {@link #release}. */
    static final class Service0 extends TestRpcBase.PBServerImpl {
        volatile InetAddress remoteIp;
        final CountDownLatch release = new CountDownLatch(1);
        final CountDownLatch blocked = new CountDownLatch(1);

        @Override
        public EmptyResponseProto ping(RpcController unused, EmptyRequestProto request) throws ServiceException {
            remoteIp = Server.getRemoteIp();
            return super.ping(unused, request);
        }

        @Override
        public EchoResponseProto echo(RpcController unused, EchoRequestProto request) throws ServiceException {
            if (request.getMessage().equals("block")) {
                blocked.countDown();
                try {
                    release.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return super.echo(unused, request);
        }
    }

    private RdmxServer server(Configuration c, Service0 impl, int handlers, int queuePerHandler) throws IOException {
        BlockingService svc = TestProtobufRpcProto.newReflectiveBlockingService(impl);
        RdmxServer s = (RdmxServer) new RdmxRpcEngine().getServer(TestRpcService.class, svc, "127.0.0.1", 0,
            handlers, 1, queuePerHandler, false, c, null, null, null);
        started.server(s);
        if (c.getBoolean(CommonConfigurationKeys.HADOOP_SECURITY_AUTHORIZATION, false)) {
            s.refreshServiceAcl(c, POLICY);
        }
        s.start();
        return s;
    }

    private TestRpcService proxy(RPC.Server s, Configuration c, UserGroupInformation user) throws IOException {
        InetSocketAddress addr = NetUtils.getConnectAddress(s);
        TestRpcService p = new RdmxRpcEngine().getProxy(TestRpcService.class, 1, addr, user, c,
            NetUtils.getDefaultSocketFactory(c), 0, null).getProxy();
        started.proxy(p);
        return p;
    }

    /** A server whose protocol ACL allows everyone, from the given hosts only. */
    private Configuration acl(String users, String hosts) {
        Configuration c = new Configuration(conf);
        c.setBoolean(CommonConfigurationKeys.HADOOP_SECURITY_AUTHORIZATION, true);
        c.set(ACL, users);
        c.set(ACL.substring(0, ACL.lastIndexOf('.')) + ".hosts", hosts);     // Hadoop's host-list key
        return c;
    }

    /**
     * The proxy's context prefix (the host it names, then its connection context) with another host named: what
     * a client that lies about where it is sends. The proxy must have made a call over rdmx (its prefix is built).
     */
    private static void claimHost(TestRpcService p, String host) throws ReflectiveOperationException, IOException {
        Object invoker = Proxy.getInvocationHandler(p);
        Field f = RdmxInvoker.class.getDeclaredField("prefix");
        f.setAccessible(true);
        byte[] prefix = (byte[]) f.get(invoker);
        assertNotNull(prefix, "the proxy made no call over rdmx yet");
        int hostBytes = 2 + (ByteBuffer.wrap(prefix).getShort(0) & 0xFFFF);
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        new DataOutputStream(o).writeUTF(host);
        o.write(Arrays.copyOfRange(prefix, hostBytes, prefix.length));
        f.set(invoker, o.toByteArray());
    }

    private static RemoteException remote(ServiceException e) {
        return assertInstanceOf(RemoteException.class, e.getCause());
    }

    /** @return the failure of a ping as {@code user}, or null if it went through */
    private static ServiceException pingAs(UserGroupInformation user, TestRpcService p) throws Exception {
        return user.doAs((PrivilegedExceptionAction<ServiceException>) () -> {
            try {
                p.ping(null, TestRpcBase.newEmptyRequest());
                return null;
            } catch (ServiceException e) {
                return e;
            }
        });
    }

    @Test
    void theCallersAddressIsItsConnectionsNotTheHostItsRequestNames() throws Exception {
        Service0 impl = new Service0();
        RdmxServer s = server(conf, impl, 2, 100);
        TestRpcService p = proxy(s, conf, UserGroupInformation.getCurrentUser());
        p.ping(null, TestRpcBase.newEmptyRequest());
        assertEquals(InetAddress.getByName("127.0.0.1"), impl.remoteIp);
        claimHost(p, FORGED);
        p.ping(null, TestRpcBase.newEmptyRequest());
        assertEquals(InetAddress.getByName("127.0.0.1"), impl.remoteIp,
            "Server.getRemoteIp() (the audit log's ip=) is where the connection comes from, not the host claimed");
        assertEquals(2, s.rdmxCalls());
    }

    @Test
    void aServiceAclHostListIsCheckedAgainstTheConnectionsAddressNotTheClaimedHost() throws Exception {
        RdmxServer s = server(acl("*", FORGED), new Service0(), 2, 100);
        TestRpcService p = proxy(s, conf, UserGroupInformation.getCurrentUser());
        // the first call goes over rdmx, from 127.0.0.1: not in the host list
        ServiceException first = assertThrows(ServiceException.class, () -> p.ping(null,
            TestRpcBase.newEmptyRequest()));
        assertTrue(remote(first).getClassName().equals(AuthorizationException.class.getName()),
            remote(first).getClassName());
        for (String claim : new String[] {FORGED, ""}) {
            // claiming to be on the allowed host, or naming no host (a null address skipped the host check)
            claimHost(p, claim);
            ServiceException e = assertThrows(ServiceException.class, () -> p.ping(null,
                TestRpcBase.newEmptyRequest()), "claimed host '" + claim + "' let the call through");
            RemoteException re = remote(e);
            assertEquals(AuthorizationException.class.getName(), re.getClassName(), re.getMessage());
            assertTrue(re.getMessage().contains("127.0.0.1"), re.getMessage());
        }
        assertEquals(0, s.rdmxCalls());
    }

    @Test
    void anAddressThatIsNotAnIpLiteralIsNeverLookedUpAndPlacesNoCaller() throws Exception {
        assertEquals(InetAddress.getByName("127.0.0.1"), Callers.ipLiteral("127.0.0.1"));
        assertEquals(InetAddress.getByName("::1"), Callers.ipLiteral("0:0:0:0:0:0:0:1"));
        for (String bad : new String[] {null, "", "unknown", "localhost", "999.1.1.1", "1.2.3", "1.2.3.4.5",
            "cafe", "example.invalid", "1.2.3.x"}) {
            assertNull(Callers.ipLiteral(bad), "address=" + bad);
        }
    }

    @Test
    void revokingAServiceAclRefusesTheNextCall() throws Exception {
        Configuration c = acl("alice", "*");
        RdmxServer s = server(c, new Service0(), 2, 100);
        UserGroupInformation alice = UserGroupInformation.createRemoteUser("alice");
        TestRpcService p = alice.doAs((PrivilegedExceptionAction<TestRpcService>) () -> proxy(s, conf, alice));
        assertNull(pingAs(alice, p));
        Configuration revoked = acl("bob", "*");
        s.refreshServiceAcl(revoked, POLICY);
        ServiceException e = pingAs(alice, p);
        assertNotNull(e, "alice's call went through after her ACL was revoked");
        RemoteException re = remote(e);
        assertEquals(AuthorizationException.class.getName(), re.getClassName(), re.getMessage());
        assertTrue(re.getMessage().contains("alice"), re.getMessage());
        // and granting it again lets the next call through
        s.refreshServiceAcl(c, POLICY);
        assertNull(pingAs(alice, p));
        assertEquals(2, s.rdmxCalls());
    }

    @Test
    void revokingAProxyUserRuleRefusesTheNextCall() throws Exception {
        Configuration rules = new Configuration(false);
        rules.set("hadoop.proxyuser.super.users", "alice");
        rules.set("hadoop.proxyuser.super.hosts", "*");
        ProxyUsers.refreshSuperUserGroupsConfiguration(rules);
        RdmxServer s = server(conf, new Service0(), 2, 100);
        UserGroupInformation alice = UserGroupInformation.createProxyUser("alice",
            UserGroupInformation.createRemoteUser("super"));
        TestRpcService p = alice.doAs((PrivilegedExceptionAction<TestRpcService>) () -> proxy(s, conf, alice));
        assertNull(pingAs(alice, p));
        Configuration revoked = new Configuration(false);
        revoked.set("hadoop.proxyuser.super.users", "alice");
        revoked.set("hadoop.proxyuser.super.hosts", FORGED);
        ProxyUsers.refreshSuperUserGroupsConfiguration(revoked);
        ServiceException e = pingAs(alice, p);
        assertNotNull(e, "super's call as alice went through after the rule was revoked");
        RemoteException re = remote(e);
        assertEquals(AuthorizationException.class.getName(), re.getClassName(), re.getMessage());
        assertTrue(re.getMessage().contains("127.0.0.1"), re.getMessage());
        assertEquals(1, s.rdmxCalls());
    }

    @Test
    void ipcMaximumDataLengthRefusesARequestOnItsFirstFragment() throws Exception {
        Configuration c = new Configuration(conf);
        c.setInt(CommonConfigurationKeys.IPC_MAXIMUM_DATA_LENGTH, 64 << 10);
        RdmxServer s = server(c, new Service0(), 2, 100);
        TestRpcService p = proxy(s, conf, UserGroupInformation.getCurrentUser());
        assertEquals("short", p.echo(null, EchoRequestProto.newBuilder().setMessage("short").build()).getMessage());
        long refused = s.rdmxRequestsRefused();
        // 4 MiB: many fragments through the 2 MiB rings, far over the limit; the rdmx message bound is larger
        // (ipc.maximum.response.length, 128 MiB)
        String big = "X".repeat(4 << 20);
        ServiceException e = assertThrows(ServiceException.class, () -> p.echo(null,
            EchoRequestProto.newBuilder().setMessage(big).build()));
        RemoteException re = remote(e);
        assertTrue(re.getMessage().contains("is longer than maximum configured RPC length 65536"), re.getMessage());
        assertEquals(refused + 1, s.rdmxRequestsRefused(), "refused before it was reassembled");
        assertEquals("again", p.echo(null, EchoRequestProto.newBuilder().setMessage("again").build()).getMessage());
    }

    @Test
    void aFullCallQueueDoesNotStopTheRdmxReader() throws Exception {
        Configuration c = new Configuration(conf);
        c.setInt(CommonConfigurationKeys.IPC_MAXIMUM_DATA_LENGTH, 1024);
        Service0 impl = new Service0();
        // one Hadoop handler and a call queue of one
        RdmxServer s = server(c, impl, 1, 1);
        TestRpcService p = proxy(s, conf, UserGroupInformation.getCurrentUser());
        p.ping(null, TestRpcBase.newEmptyRequest());
        long base = s.rdmxCalls();
        List<CompletableFuture<String>> stuck = new ArrayList<>();
        try {
            // the handler blocks on the first, the second fills the queue, the third finds it full
            for (int i = 0; i < 3; i++) {
                String m = i == 0 ? "block" : "queued-" + i;
                stuck.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        return p.echo(null, EchoRequestProto.newBuilder().setMessage(m).build()).getMessage();
                    } catch (ServiceException e) {
                        throw new IllegalStateException(e);
                    }
                }, r -> new Thread(r, "caller-" + m).start()));
                if (i == 0) {
                    assertTrue(impl.blocked.await(30, TimeUnit.SECONDS), "the handler never took the first call");
                }
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (s.rdmxCalls() < base + 3 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertEquals(base + 3, s.rdmxCalls(), "the three calls reached the server");
            // the reader still reads: a request over the limit is answered now, not once the queue has room
            CompletableFuture<Throwable> tooLarge = CompletableFuture.supplyAsync(() -> {
                try {
                    p.echo(null, EchoRequestProto.newBuilder().setMessage("Y".repeat(4096)).build());
                    return null;
                } catch (ServiceException e) {
                    return e.getCause();
                }
            }, r -> new Thread(r, "caller-too-large").start());
            Throwable t = tooLarge.get(20, TimeUnit.SECONDS);
            assertInstanceOf(RemoteException.class, t);
            assertTrue(t.getMessage().contains("1024"), t.getMessage());
        } finally {
            impl.release.countDown();
        }
        assertEquals("block", stuck.get(0).get(30, TimeUnit.SECONDS));
        assertEquals("queued-1", stuck.get(1).get(30, TimeUnit.SECONDS));
        assertEquals("queued-2", stuck.get(2).get(30, TimeUnit.SECONDS));
    }

    @Test
    void theRdmxSecretComesFromHadoopsCredentialProviders(@TempDir Path dir) throws Exception {
        Configuration c = new Configuration(conf);
        c.set(CredentialProviderFactory.CREDENTIAL_PROVIDER_PATH,
            "jceks://file" + dir.resolve("rdmx.jceks").toAbsolutePath());
        CredentialProvider store = CredentialProviderFactory.getProviders(c).get(0);
        store.createCredentialEntry("rdmx.secret", "a secret kept in a credential store".toCharArray());
        store.flush();
        RdmxServer s = server(c, new Service0(), 2, 100);
        assertEquals("code", s.rdmxSecretSource(), "the listener's node has the store's secret");
        UserGroupInformation me = UserGroupInformation.getCurrentUser();
        long rdmx = RdmxRpcEngine.clientCallsOverRdmx();
        long tcp = RdmxRpcEngine.clientCallsOverTcp();
        proxy(s, c, me).ping(null, TestRpcBase.newEmptyRequest());
        assertEquals(rdmx + 1, RdmxRpcEngine.clientCallsOverRdmx(), "a client with the same store calls over rdmx");
        // a client without the secret cannot dial the listener (refused at the handshake): its call takes TCP
        proxy(s, conf, me).ping(null, TestRpcBase.newEmptyRequest());
        assertEquals(rdmx + 1, RdmxRpcEngine.clientCallsOverRdmx(), "a client without the secret called over rdmx");
        assertEquals(tcp + 1, RdmxRpcEngine.clientCallsOverTcp());
        assertEquals(1, s.rdmxCalls());
    }
}
