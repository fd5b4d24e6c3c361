package io.rdmx.rpc.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.FabricTraits;
import java.io.EOFException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.URISyntaxException;
import java.security.PrivilegedExceptionAction;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonConfigurationKeys;
import org.apache.hadoop.ipc.Client;
import org.apache.hadoop.ipc.ClientId;
import org.apache.hadoop.ipc.DefaultRpcScheduler;
import org.apache.hadoop.ipc.ProcessingDetails;
import org.apache.hadoop.ipc.ProtobufRpcEngine2;
import org.apache.hadoop.ipc.RPC;
import org.apache.hadoop.ipc.RemoteException;
import org.apache.hadoop.ipc.RpcScheduler;
import org.apache.hadoop.ipc.RpcServerException;
import org.apache.hadoop.ipc.Schedulable;
import org.apache.hadoop.ipc.Server;
import org.apache.hadoop.ipc.TestRpcBase;
import org.apache.hadoop.ipc.TestRpcBase.TestRpcService;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcResponseHeaderProto.RpcErrorCodeProto;
import org.apache.hadoop.ipc.protobuf.TestProtos.EchoRequestProto;
import org.apache.hadoop.ipc.protobuf.TestProtos.EchoResponseProto;
import org.apache.hadoop.ipc.protobuf.TestProtos.EmptyRequestProto;
import org.apache.hadoop.ipc.protobuf.TestProtos.EmptyResponseProto;
import org.apache.hadoop.ipc.protobuf.TestRpcServiceProtos.TestProtobufRpcProto;
import org.apache.hadoop.net.NetUtils;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.test.MetricsAsserts;
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

/**
 * The engine against Hadoop's own protobuf test protocol ({@code TestRpcBase.TestRpcService} of the
 * hadoop-common test-jar): servers and proxies are made through the engines directly, so the JVM-wide engine cache
 * of {@link RPC} plays no part and a stock {@link ProtobufRpcEngine2} server can sit beside an rdmx one.
 */
@EnabledForJreRange(max = JRE.JAVA_22, disabledReason = HadoopJdk.REASON)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RdmxRpcEngineTest {
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
    }

    /** Records what Hadoop's server-side accessors report for each ping. */
    static final class Recording extends TestRpcBase.PBServerImpl {
        volatile int callId = -100;
        volatile int retryCount = -100;
        volatile byte[] clientId;
        volatile String protocol;
        volatile String thread;

        @Override
        public EmptyResponseProto ping(RpcController unused, EmptyRequestProto request) throws ServiceException {
            thread = Thread.currentThread().getName();
            callId = Server.getCallId();
            retryCount = Server.getCallRetryCount();
            clientId = Server.getClientId();
            protocol = Server.getProtocol();
            return super.ping(unused, request);
        }
    }

    private RPC.Server start(RPC.Server s) {
        started.server(s);
        s.start();
        return s;
    }

    private RdmxServer rdmxServer(Configuration c, TestRpcBase.PBServerImpl impl) throws IOException {
        BlockingService svc = TestProtobufRpcProto.newReflectiveBlockingService(impl);
        return (RdmxServer) start(new RdmxRpcEngine().getServer(TestRpcService.class, svc, "127.0.0.1", 0, 2, 1,
            100, false, c, null, null, null));
    }

    private TestRpcService proxy(RPC.Server s, Configuration c) throws IOException {
        InetSocketAddress addr = NetUtils.getConnectAddress(s);
        TestRpcService p = new RdmxRpcEngine().getProxy(TestRpcService.class, 1, addr,
            UserGroupInformation.getCurrentUser(), c, NetUtils.getDefaultSocketFactory(c), 0, null).getProxy();
        started.proxy(p);
        return p;
    }

    private static EchoRequestProto echo(String s) {
        return EchoRequestProto.newBuilder().setMessage(s).build();
    }


    @Test
    void callsGoOverRdmxOnTheTcpProviderAndThroughHadoopsCallQueue() throws Exception {
        RdmxServer s = rdmxServer(conf, new TestRpcBase.PBServerImpl());
        assertNull(s.rdmxOffReason());
        assertNotNull(s.rdmxAddress());
        TestRpcService p = proxy(s, conf);
        long rdmx = RdmxRpcEngine.clientCallsOverRdmx();
        long tcp = RdmxRpcEngine.clientCallsOverTcp();
        p.ping(null, TestRpcBase.newEmptyRequest());
        assertEquals("hello", p.echo(null, echo("hello")).getMessage());
        assertEquals(2, RdmxRpcEngine.clientCallsOverRdmx() - rdmx);
        assertEquals(0, RdmxRpcEngine.clientCallsOverTcp() - tcp);
        assertEquals(2, s.rdmxCalls());
        // Hadoop's handlers ran them: its RPC metrics counted both (plus the TCP probe of the endpoint)
        assertTrue(s.getRpcMetrics().getProcessingSampleCount() >= 2, "processing samples");
    }

    /**
     * Every RPC frame is flushed by its sender, so neither side's engine runs a timed flush: its network thread
     * then sleeps until a completion (50 ms at most) instead of waking every millisecond for a flush scan.
     */
    @Test
    void neitherSidesEngineRunsATimedFlush() throws Exception {
        RdmxServer s = rdmxServer(conf, new TestRpcBase.PBServerImpl());
        assertTrue(s.rdmxChannelConfig().flushInterval().isZero(), "server: " + s.rdmxChannelConfig());
        assertEquals("hello", proxy(s, conf).echo(null, echo("hello")).getMessage());
        HadoopRdmxConfig defaults = HadoopRdmxConfig.of(new Configuration(false));
        RdmxClients.Shared c = RdmxClients.acquire(defaults.listenerFabric().name(), 0, 1 << 20, defaults);
        try {
            assertTrue(c.engine.config().flushInterval().isZero(), "client: " + c.engine.config());
        } finally {
            RdmxClients.release(c);
        }
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"direct", "reader"})
    void directDispatchRunsCallsOnTheRdmxHandlerAsTheCaller(String dispatch) throws Exception {
        Configuration c = new Configuration(conf);
        c.set(HadoopRdmxConfig.DISPATCH_KEY, dispatch);
        Recording impl = new Recording();
        RdmxServer s = rdmxServer(c, impl);
        TestRpcService p = proxy(s, conf);
        // the connection's first call: its context is authorized, which may block, so with reader dispatch it runs
        // on the server's admission pool (rdmx-hadoop-admit-*)
        p.ping(null, TestRpcBase.newEmptyRequest());
        Client.setCallIdAndRetryCount(777, 1, null);
        p.ping(null, TestRpcBase.newEmptyRequest());
        // direct: an rdmx handler thread runs it; reader: the rdmx reader thread that decoded it (no hand-off)
        String runner = dispatch.equals("reader") ? "rdmx-rpc-server-" : "rdmx-rpc-handler-";
        assertTrue(impl.thread.startsWith(runner), dispatch + " dispatch ran the call on " + impl.thread);
        assertEquals(777, impl.callId);
        assertEquals(1, impl.retryCount);
        UserGroupInformation bob = UserGroupInformation.createRemoteUser("bob");
        String seen = bob.doAs((PrivilegedExceptionAction<String>) () ->
            proxy(s, conf).getCurrentUser(null, TestRpcBase.newEmptyRequest()).getUser());
        assertTrue(seen.startsWith("bob"), seen);
        ServiceException e = assertThrows(ServiceException.class, () -> p.error2(null, TestRpcBase.newEmptyRequest()));
        assertEquals(URISyntaxException.class.getName(), ((RemoteException) e.getCause()).getClassName());
        assertEquals(4, s.rdmxCalls());
        assertTrue(s.getRpcMetrics().getProcessingSampleCount() >= 4, "Hadoop's metrics counted the direct calls");
    }

    @Test
    void callsGoOverRdmxOnTheShmProvider() throws Exception {
        conf.set(HadoopRdmxConfig.PROVIDER_KEY, "shm");
        RdmxServer s = rdmxServer(conf, new TestRpcBase.PBServerImpl());
        assertTrue(s.rdmxAddress().contains(RdmxEndpoint.nodeName(s.getListenerAddress().getPort())),
            s.rdmxAddress());
        TestRpcService p = proxy(s, conf);
        String big = "x".repeat(600 << 10);       // one ring record each way in the default 2 MiB rings
        assertEquals(big, p.echo(null, echo(big)).getMessage());
        assertEquals(1, s.rdmxCalls());
    }

    @Test
    void clientsOpenTheirRingsWithTheCapacityTheServerAdvertises() throws Exception {
        Configuration small = new Configuration(conf);
        small.setInt(HadoopRdmxConfig.RING_BYTES_KEY, 128 << 10);
        RdmxServer s = rdmxServer(small, new TestRpcBase.PBServerImpl());
        RdmxServer d = rdmxServer(conf, new TestRpcBase.PBServerImpl());
        long tcp = RdmxRpcEngine.clientCallsOverTcp();
        // the proxies' configuration names no ring capacity: a client whose rings did not match a server's would
        // fail the channel handshake and fall back to TCP
        String big = "y".repeat(600 << 10);       // fragmented both ways through 128 KiB rings, one record in 2 MiB
        assertEquals(big, proxy(s, conf).echo(null, echo(big)).getMessage());
        assertEquals(big, proxy(d, conf).echo(null, echo(big)).getMessage());
        assertEquals("z", proxy(s, conf).echo(null, echo("z")).getMessage());
        assertEquals(2, s.rdmxCalls());
        assertEquals(1, d.rdmxCalls());
        assertEquals(0, RdmxRpcEngine.clientCallsOverTcp() - tcp);
    }

    @Test
    void theAdvertisedValueCarriesTheRingCapacityAndABadOneFailsNamingTheKey() {
        long v = RdmxEndpoint.encode(RdmxEndpoint.LOCAL, 50070, 2 << 20);
        assertEquals(RdmxEndpoint.LOCAL, RdmxEndpoint.provider(v));
        assertEquals(50070, RdmxEndpoint.port(v));
        assertEquals(2 << 20, RdmxEndpoint.ringCapacity(v));
        assertEquals(0, RdmxEndpoint.ringCapacity(RdmxEndpoint.encode(RdmxEndpoint.ROUTED, 8020)),
            "a server that does not advertise its ring: the client uses the channel default");
        Configuration c = new Configuration(conf);
        c.setInt(HadoopRdmxConfig.RING_BYTES_KEY, 100_000);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> HadoopRdmxConfig.of(c));
        assertTrue(e.getMessage().contains("rdmx.rpc.hadoop.ringBytes=100000"), e.getMessage());
    }

    @Test
    void serverFailuresAreRemoteExceptionsInsideServiceException() throws Exception {
        RdmxServer s = rdmxServer(conf, new TestRpcBase.PBServerImpl());
        TestRpcService p = proxy(s, conf);
        ServiceException e = assertThrows(ServiceException.class, () -> p.error(null, TestRpcBase.newEmptyRequest()));
        RemoteException re = assertInstanceOf(RemoteException.class, e.getCause());
        assertInstanceOf(RpcServerException.class, re.unwrapRemoteException(RpcServerException.class));
        assertEquals(RpcErrorCodeProto.ERROR_RPC_SERVER, re.getErrorCode());
        e = assertThrows(ServiceException.class, () -> p.error2(null, TestRpcBase.newEmptyRequest()));
        re = assertInstanceOf(RemoteException.class, e.getCause());
        assertEquals(URISyntaxException.class.getName(), re.getClassName());
        assertTrue(re.getMessage().contains("testException"), re.getMessage());
        assertEquals(RpcErrorCodeProto.ERROR_APPLICATION, re.getErrorCode());
        assertEquals(2, s.rdmxCalls());
    }

    @Test
    void callIdRetryCountAndClientIdAreHadoops() throws Exception {
        Recording impl = new Recording();
        RdmxServer s = rdmxServer(conf, impl);
        TestRpcService p = proxy(s, conf);
        Client.setCallIdAndRetryCount(4242, 3, null);      // as RetryInvocationHandler does before a retry
        p.ping(null, TestRpcBase.newEmptyRequest());
        assertEquals(4242, impl.callId);
        assertEquals(3, impl.retryCount);
        assertEquals("rdmx", impl.protocol);
        byte[] first = impl.clientId;
        assertEquals(ClientId.BYTE_LENGTH, first.length);
        p.ping(null, TestRpcBase.newEmptyRequest());       // the id was consumed: a fresh one from the counter
        assertNotEquals(4242, impl.callId);
        assertTrue(impl.callId >= 0);
        assertArrayEquals(first, impl.clientId, "one client id per client");
        assertEquals(2, s.rdmxCalls());
    }

    @Test
    void theServerSeesTheCallingUser() throws Exception {
        RdmxServer s = rdmxServer(conf, new TestRpcBase.PBServerImpl());
        UserGroupInformation alice = UserGroupInformation.createRemoteUser("alice");
        String seen = alice.doAs((PrivilegedExceptionAction<String>) () ->
            proxy(s, conf).getServerRemoteUser(null, TestRpcBase.newEmptyRequest()).getUser());
        assertTrue(seen.startsWith("alice"), seen);
        String current = alice.doAs((PrivilegedExceptionAction<String>) () ->
            proxy(s, conf).getCurrentUser(null, TestRpcBase.newEmptyRequest()).getUser());
        assertTrue(current.startsWith("alice"), "the handler ran as the caller: " + current);
        assertEquals(2, s.rdmxCalls());
    }

    /**
     * Hadoop's test service whose {@code echoPostponed} handler counts down once it has postponed its call: the
     * signal the postponed-call tests wait for (Hadoop's processing metric is none: a handler counts a call only
     * after its response went out).
     *
     * <p>Hadoop's service keeps its postponed calls in a plain {@code ArrayList}, and with {@code queue} dispatch the
     * server's two Hadoop handler threads run {@code echoPostponed} at once: a lost or failed {@code add} lost a call
     * (about 1 run in 40 failed that way: a handler that never counted down, or an answer never sent). Here the list
     * is only touched under this service's monitor.
     */
    private static TestRpcBase.PBServerImpl postponingService(CountDownLatch postponing) {
        return new TestRpcBase.PBServerImpl() {
            @Override
            public EchoResponseProto echoPostponed(RpcController c, EchoRequestProto r) throws ServiceException {
                EchoResponseProto answer;
                synchronized (this) {
                    answer = super.echoPostponed(c, r);
                }
                postponing.countDown();
                return answer;
            }

            @Override
            public synchronized EmptyResponseProto sendPostponed(RpcController c, EmptyRequestProto r)
                throws ServiceException {
                return super.sendPostponed(c, r);
            }
        };
    }

    @Test
    void postponedResponsesAreSentWhenTheServerSendsThem() throws Exception {
        CountDownLatch postponing = new CountDownLatch(1);
        RdmxServer s = rdmxServer(conf, postponingService(postponing));
        TestRpcService p = proxy(s, conf);
        p.ping(null, TestRpcBase.newEmptyRequest());
        CompletableFuture<String> postponed = CompletableFuture.supplyAsync(() -> {
            try {
                return p.echoPostponed(null, echo("later")).getMessage();
            } catch (ServiceException e) {
                throw new IllegalStateException(e);
            }
        });
        // the handler postponed the call: its answer waits for sendPostponed
        assertTrue(postponing.await(30, TimeUnit.SECONDS), "the handler never postponed the call");
        assertTrue(!postponed.isDone(), "answered before it was sent");
        p.sendPostponed(null, TestRpcBase.newEmptyRequest());
        assertEquals("later", postponed.get(30, TimeUnit.SECONDS));
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"queue", "direct", "reader"})
    void postponedResponsesHoldNoRdmxThreadAndAreWrittenByTheThreadThatSendsThem(String dispatch) throws Exception {
        Configuration c = new Configuration(conf);
        c.set(HadoopRdmxConfig.DISPATCH_KEY, dispatch);
        c.setInt(HadoopRdmxConfig.HANDLER_THREADS_KEY, 1);    // one rdmx handler thread: it must not wait for answers
        int n = 3;
        CountDownLatch postponing = new CountDownLatch(n);
        RdmxServer s = rdmxServer(c, postponingService(postponing));
        TestRpcService p = proxy(s, c);
        p.ping(null, TestRpcBase.newEmptyRequest());
        List<CompletableFuture<String>> postponed = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String m = "later-" + i;
            postponed.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return p.echoPostponed(null, echo(m)).getMessage();
                } catch (ServiceException e) {
                    throw new IllegalStateException(e);
                }
            }, runnable -> new Thread(runnable, "postponed-caller").start()));
        }
        assertTrue(postponing.await(30, TimeUnit.SECONDS), "all " + n
            + " handlers postponing their calls (with one rdmx handler thread); " + postponing.getCount() + " left");
        for (CompletableFuture<String> f : postponed) {
            assertTrue(!f.isDone(), "answered before it was sent");
        }
        p.sendPostponed(null, TestRpcBase.newEmptyRequest());
        for (int i = 0; i < n; i++) {
            assertEquals("later-" + i, postponed.get(i).get(30, TimeUnit.SECONDS));
        }
    }

    @Test
    void ipcMaximumDataLengthIsEnforced() throws Exception {
        Configuration c = new Configuration(conf);
        c.setInt(CommonConfigurationKeys.IPC_MAXIMUM_DATA_LENGTH, 1024);
        RdmxServer s = rdmxServer(c, new TestRpcBase.PBServerImpl());
        TestRpcService p = proxy(s, conf);
        assertEquals("short", p.echo(null, echo("short")).getMessage());
        ServiceException e = assertThrows(ServiceException.class, () -> p.echo(null, echo("X".repeat(4096))));
        RemoteException re = assertInstanceOf(RemoteException.class, e.getCause());
        assertTrue(re.getMessage().contains("1024"), re.getMessage());
        assertEquals("again", p.echo(null, echo("again")).getMessage(), "the connection survives");
    }

    @Test
    void aStockServerIsCalledOverTcp() throws Exception {
        BlockingService svc = TestProtobufRpcProto.newReflectiveBlockingService(new TestRpcBase.PBServerImpl());
        RPC.Server stock = start(new ProtobufRpcEngine2().getServer(TestRpcService.class, svc, "127.0.0.1", 0, 2, 1,
            100, false, conf, null, null, null));
        TestRpcService p = proxy(stock, conf);
        long rdmx = RdmxRpcEngine.clientCallsOverRdmx();
        long tcp = RdmxRpcEngine.clientCallsOverTcp();
        assertEquals("stock", p.echo(null, echo("stock")).getMessage());
        assertEquals("stock2", p.echo(null, echo("stock2")).getMessage());
        assertEquals(2, RdmxRpcEngine.clientCallsOverTcp() - tcp);
        assertEquals(0, RdmxRpcEngine.clientCallsOverRdmx() - rdmx);
    }

    @Test
    void theListenerProviderIsChosenByWhatTheEngineCanAdvertise() throws Exception {
        assertEquals(FabricTraits.Reach.NETWORK, HadoopRdmxConfig.of(new Configuration(false)).listenerFabric()
            .traits().reach(), "auto: a provider that reaches other hosts");
        Configuration c = new Configuration(false);
        c.set(HadoopRdmxConfig.PROVIDER_KEY, "loopback");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> HadoopRdmxConfig.of(c));
        assertTrue(e.getMessage().startsWith(HadoopRdmxConfig.PROVIDER_KEY + "=loopback (expected auto, none or one"
            + " of ["), e.getMessage());
        assertTrue(e.getMessage().contains("shm") && e.getMessage().contains("tcp"), e.getMessage());
    }

    @Test
    void aServerWithoutAListenerIsCalledOverTcp() throws Exception {
        Configuration c = new Configuration(conf);
        c.set(HadoopRdmxConfig.PROVIDER_KEY, "none");
        RdmxServer s = rdmxServer(c, new TestRpcBase.PBServerImpl());
        assertNotNull(s.rdmxOffReason());
        TestRpcService p = proxy(s, conf);
        long tcp = RdmxRpcEngine.clientCallsOverTcp();
        assertEquals("plain", p.echo(null, echo("plain")).getMessage());
        assertEquals(1, RdmxRpcEngine.clientCallsOverTcp() - tcp);
        assertEquals(0, s.rdmxCalls());
    }

    @Test
    void anAdvertisedListenerThatCannotBeReachedSendsCallsOverTcp() throws Exception {
        RdmxServer s = rdmxServer(conf, new TestRpcBase.PBServerImpl());
        s.closeRdmxListenerKeepingTheAdvertisement();
        TestRpcService p = proxy(s, conf);
        long tcp = RdmxRpcEngine.clientCallsOverTcp();
        long rdmx = RdmxRpcEngine.clientCallsOverRdmx();
        assertEquals("around", p.echo(null, echo("around")).getMessage());   // after a bounded dial (2 s here)
        assertEquals("again", p.echo(null, echo("again")).getMessage());     // remembered: no second dial
        assertEquals(2, RdmxRpcEngine.clientCallsOverTcp() - tcp);
        assertEquals(0, RdmxRpcEngine.clientCallsOverRdmx() - rdmx);
        assertEquals(0, s.rdmxCalls());
    }

    /**
     * A call over rdmx and a call over Hadoop's TCP client carry the same client id (the TCP one), as two TCP
     * proxies of one socket factory do: a call that went over rdmx and is retried over TCP (its listener lost)
     * is then known to the server's RetryCache, which keys on client id and call id. With the shared rdmx
     * client's own id, a retried create or delete ran twice.
     */
    @Test
    void aCallOverRdmxAndOneOverTcpCarryTheSameClientId() throws Exception {
        Recording overRdmx = new Recording();
        RdmxServer s1 = rdmxServer(conf, overRdmx);
        Recording overTcp = new Recording();
        RdmxServer s2 = rdmxServer(conf, overTcp);
        s2.closeRdmxListenerKeepingTheAdvertisement();
        long rdmx = RdmxRpcEngine.clientCallsOverRdmx();
        long tcp = RdmxRpcEngine.clientCallsOverTcp();
        proxy(s1, conf).ping(null, TestRpcBase.newEmptyRequest());
        proxy(s2, conf).ping(null, TestRpcBase.newEmptyRequest()); // after a bounded dial (2 s here)
        assertEquals(1, RdmxRpcEngine.clientCallsOverRdmx() - rdmx);
        assertEquals(1, RdmxRpcEngine.clientCallsOverTcp() - tcp);
        assertNotNull(overRdmx.clientId);
        assertEquals(16, overRdmx.clientId.length);
        assertEquals(java.util.HexFormat.of().formatHex(overTcp.clientId),
            java.util.HexFormat.of().formatHex(overRdmx.clientId));
    }

    @Test
    void anAlignmentContextMeansTcp() throws Exception {
        RdmxServer s = rdmxServer(conf, new TestRpcBase.PBServerImpl());
        TestRpcService p = new RdmxRpcEngine().getProxy(TestRpcService.class, 1, NetUtils.getConnectAddress(s),
            UserGroupInformation.getCurrentUser(), conf, NetUtils.getDefaultSocketFactory(conf), 0, null, null,
            new org.apache.hadoop.hdfs.ClientGSIContext()).getProxy();
        started.proxy(p);
        long tcp = RdmxRpcEngine.clientCallsOverTcp();
        assertEquals("observer", p.echo(null, echo("observer")).getMessage());
        assertEquals(1, RdmxRpcEngine.clientCallsOverTcp() - tcp);
        assertEquals(0, s.rdmxCalls());
    }

    @Test
    void asynchronousModeMeansTcp() throws Exception {
        RdmxServer s = rdmxServer(conf, new TestRpcBase.PBServerImpl());
        TestRpcService p = proxy(s, conf);
        p.echo(null, echo("sync"));                                           // connected over rdmx first
        long tcp = RdmxRpcEngine.clientCallsOverTcp();
        Client.setAsynchronousMode(true);
        try {
            assertNull(p.echo(null, echo("async")), "asynchronous calls answer through getAsyncReturnMessage");
            org.apache.hadoop.thirdparty.protobuf.Message m = ProtobufRpcEngine2.getAsyncReturnMessage()
                .get(30, TimeUnit.SECONDS);
            assertEquals("async", ((org.apache.hadoop.ipc.protobuf.TestProtos.EchoResponseProto) m).getMessage());
        } finally {
            Client.setAsynchronousMode(false);
        }
        assertEquals(1, RdmxRpcEngine.clientCallsOverTcp() - tcp);
        assertEquals(1, s.rdmxCalls());
    }

    @Test
    void stockClientsStillUseTheTcpPortOfAnRdmxServer() throws Exception {
        RdmxServer s = rdmxServer(conf, new TestRpcBase.PBServerImpl());
        TestRpcService stock = new ProtobufRpcEngine2().getProxy(TestRpcService.class, 1,
            NetUtils.getConnectAddress(s), UserGroupInformation.getCurrentUser(), conf,
            NetUtils.getDefaultSocketFactory(conf), 0, null).getProxy();
        started.proxy(stock);
        assertEquals("tcp", stock.echo(null, echo("tcp")).getMessage());
        assertEquals(0, s.rdmxCalls());
    }

    /**
     * Hadoop's scheduler hook inside {@code Server.updateMetrics}, which Hadoop runs after the call's detailed and
     * processing metrics and before the call-success count: for the test's echo calls it holds the handler in the
     * metrics update until the client says it has the answer (or 200 ms passed), then counts the call. Were the
     * answer written before the metrics update (as Hadoop's handler order alone would have it), the client would
     * get it while the handler waits here and would see the call not counted.
     */
    public static final class HoldingScheduler extends DefaultRpcScheduler {
        static final AtomicInteger COUNTED = new AtomicInteger();
        static volatile CountDownLatch answered = new CountDownLatch(0);

        public HoldingScheduler(int levels, String namespace, Configuration conf) {
            super(levels, namespace, conf);
        }

        @Override
        public void addResponseTime(String name, Schedulable call,
            ProcessingDetails details) {
            if (name.equals("echo")) {
                try {
                    // with the answer held until this returns, the client cannot say so: the wait ends at 200 ms
                    answered.await(200, TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                COUNTED.incrementAndGet();
            }
        }
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"queue", "direct", "reader"})
    void answersReachTheClientOnlyAfterHadoopCountedTheCall(String dispatch) throws Exception {
        Configuration c = new Configuration(conf);
        c.set(HadoopRdmxConfig.DISPATCH_KEY, dispatch);
        c.setClass("ipc.0.scheduler.impl", HoldingScheduler.class, RpcScheduler.class);
        RdmxServer s = rdmxServer(c, new TestRpcBase.PBServerImpl());
        TestRpcService p = proxy(s, conf);
        p.ping(null, TestRpcBase.newEmptyRequest());
        HoldingScheduler.COUNTED.set(0);
        long rdmx = RdmxRpcEngine.clientCallsOverRdmx();
        int calls = 3;
        for (int i = 1; i <= calls; i++) {
            CountDownLatch answered = new CountDownLatch(1);
            HoldingScheduler.answered = answered;
            assertEquals("m" + i, p.echo(null, echo("m" + i)).getMessage());
            int counted = HoldingScheduler.COUNTED.get();
            long echoOps = MetricsAsserts.getLongCounter("EchoNumOps",
                MetricsAsserts.getMetrics(s.getRpcDetailedMetrics().name()));
            answered.countDown();
            assertEquals(i, counted, dispatch + " dispatch: echo " + i + " answered before Hadoop counted it");
            assertEquals(i, echoOps, dispatch + " dispatch: EchoNumOps right after echo " + i);
        }
        assertEquals(calls, RdmxRpcEngine.clientCallsOverRdmx() - rdmx, "the echo calls went over rdmx");
    }

    @Test
    void aStoppedServerFailsCallsWithJavaNetExceptionsAndStopIsIdempotent() throws Exception {
        RdmxServer s = rdmxServer(conf, new TestRpcBase.PBServerImpl());
        TestRpcService p = proxy(s, conf);
        p.ping(null, TestRpcBase.newEmptyRequest());
        int port = s.getListenerAddress().getPort();
        s.stop();
        s.stop();
        ServiceException e = assertThrows(ServiceException.class, () -> p.ping(null, TestRpcBase.newEmptyRequest()));
        Throwable c = e.getCause();
        assertTrue(c instanceof ConnectException || c instanceof EOFException,
            "a java.net/java.io type for retry policies, got " + c);
        assertTrue(c.getMessage().contains(String.valueOf(port)), c.getMessage());
    }
}
