package io.rdmx.verbs;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

import io.rdmx.transport.RdmxException;
import io.rdmx.transport.internal.RdmaCmFlow;
import io.rdmx.transport.internal.RegionImpl;
import io.rdmx.transport.internal.SetupMessage;
import io.rdmx.verbs.Native.More;
import io.rdmx.verbs.Native.RdmaConnParam;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/** The shared rdma_cm setup flow ({@link RdmaCmFlow}) on librdmacm and libibverbs through FFM. */
final class VerbsCmFlow extends RdmaCmFlow<Endpoint, VerbsConnection> {
    private final VerbsNode node;

    VerbsCmFlow(VerbsNode node) {
        super(node, "verbs", node.log());
        this.node = node;
    }

    @Override
    protected Iterable<Endpoint> setups() {
        return node.endpoints();
    }

    @Override
    protected String eventName(int type) {
        return VerbsNode.eventName(type);
    }

    private static void check(String call, int rc, MemorySegment st) throws RdmxException {
        if (rc != 0) {
            throw new RdmxException(call + " errno=" + Lib.errno(st));
        }
    }

    @Override
    protected void resolveRoute(Endpoint ep, int timeoutMs) throws Throwable {
        MemorySegment st = Lib.state();
        check("rdma_resolve_route", (int) Lib.RESOLVE_ROUTE.invoke(st, ep.id, timeoutMs), st);
    }

    /**
     * rdma_cm's connection parameters: retries without limit (7), and the RDMA READ depths, which become the queue
     * pair's {@code max_dest_rd_atomic} ({@code responder_resources}) and {@code max_rd_atomic}
     * ({@code initiator_depth}): with 0 the NIC refuses every READ. The active side asks for its node's depths (the
     * device's, capped: {@link VerbsNode#readDepth}); the passive side accepts with {@code RDMA_MAX_RESP_RES} and
     * {@code RDMA_MAX_INIT_DEPTH}, by which librdmacm takes what the requester asked for, capped by this device's
     * limits, so that neither side has more READs in flight than the other can answer.
     */
    private static MemorySegment connParam(Arena a, int responderResources, int initiatorDepth) {
        MemorySegment p = a.allocate(RdmaConnParam.SIZE, 8);
        p.set(JAVA_BYTE, RdmaConnParam.RESPONDER_RESOURCES, (byte) responderResources);
        p.set(JAVA_BYTE, RdmaConnParam.INITIATOR_DEPTH, (byte) initiatorDepth);
        p.set(JAVA_BYTE, RdmaConnParam.RETRY_COUNT, (byte) 7);
        p.set(JAVA_BYTE, RdmaConnParam.RNR_RETRY_COUNT, (byte) 7);
        return p;
    }

    /**
     * Sets the queue pair's local ACK timeout where {@link VerbsNode#ACK_TIMEOUT_PROP} asks for one: rdma_cm applies
     * it when it moves the queue pair to ready-to-send, inside rdma_connect (active side) or rdma_accept (passive).
     */
    private void ackTimeout(Endpoint ep, Arena a, MemorySegment st) throws Throwable {
        int t = node.ackTimeout();
        if (t < 0) {
            return;
        }
        MemorySegment v = a.allocate(1);
        v.set(JAVA_BYTE, 0, (byte) t);
        check("rdma_set_option(RDMA_OPTION_ID_ACK_TIMEOUT=" + t + ")", (int) Lib.SET_OPTION.invoke(st, ep.id,
            More.RDMA_OPTION_ID, More.RDMA_OPTION_ID_ACK_TIMEOUT, v, 1L), st);
    }

    @Override
    protected void connect(Endpoint ep) throws Throwable {
        MemorySegment st = Lib.state();
        try (Arena a = Arena.ofConfined()) { // rdma_connect copies the parameters
            ackTimeout(ep, a, st);
            check("rdma_connect", (int) Lib.CONNECT.invoke(st, ep.id,
                connParam(a, node.responderResources(), node.initiatorDepth())), st);
        }
    }

    @Override
    protected void accept(Endpoint ep) throws Throwable {
        MemorySegment st = Lib.state();
        try (Arena a = Arena.ofConfined()) { // rdma_accept copies the parameters
            ackTimeout(ep, a, st);
            check("rdma_accept", (int) Lib.ACCEPT.invoke(st, ep.id,
                connParam(a, More.RDMA_MAX_RESP_RES, More.RDMA_MAX_INIT_DEPTH)), st);
        }
    }

    @Override
    protected void reject(Endpoint ep) throws Throwable {
        Lib.REJECT.invoke(Lib.state(), ep.id, MemorySegment.NULL, (byte) 0);
    }

    @Override
    protected int remoteKeyOf(Endpoint ep, RegionImpl region) throws RdmxException {
        return VerbsNode.remoteKey(ep.registrationOf((Registrations) region.handle()));
    }

    @Override
    protected VerbsConnection newConnection(Endpoint ep, SetupMessage m, String peerAddress) {
        ep.peerProbe(m.probe);
        return new VerbsConnection(node, m.name, peerAddress, m.regions, ep);
    }

    @Override
    protected void forget(Endpoint ep) {
        node.forget(ep);
    }
}
