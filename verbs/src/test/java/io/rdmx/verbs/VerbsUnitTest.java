package io.rdmx.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Access;
import io.rdmx.transport.Availability;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Status;
import io.rdmx.transport.internal.RdmaCmFlow;
import io.rdmx.verbs.Native.Consts;
import io.rdmx.verbs.Native.More;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** What the verbs provider does without an RDMA device: availability and its reason, status mapping. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class VerbsUnitTest {
    @Test
    void providerIsListedAndSaysWhyItIsUnusable() throws Exception {
        VerbsFabric f = (VerbsFabric) Fabrics.get("verbs");
        Availability a = f.availability();
        assertFalse(a.reason().isBlank());
        if (!a.usable()) {
            RdmxException e = assertThrows(RdmxException.class,
                () -> f.open(NodeOptions.builder().name("nodev").build()));
            assertTrue(e.getMessage().startsWith("verbs: "), e.getMessage());
        }
    }

    @Test
    void completionStatusesMapToTheSpi() {
        assertEquals(Status.SUCCESS, WcStatus.map(Consts.IBV_WC_SUCCESS));
        assertEquals(Status.REMOTE_ACCESS_ERROR, WcStatus.map(Consts.IBV_WC_REM_ACCESS_ERR));
        assertEquals(Status.LOCAL_LENGTH_ERROR, WcStatus.map(Consts.IBV_WC_LOC_LEN_ERR));
        assertEquals(Status.REMOTE_INVALID_REQUEST, WcStatus.map(Consts.IBV_WC_REM_INV_REQ_ERR));
        assertEquals(Status.FLUSHED, WcStatus.map(Consts.IBV_WC_WR_FLUSH_ERR));
        assertEquals(Status.TRANSPORT_ERROR, WcStatus.map(More.IBV_WC_RETRY_EXC_ERR));
        assertEquals(Status.TRANSPORT_ERROR, WcStatus.map(More.IBV_WC_RNR_RETRY_EXC_ERR));
    }

    /**
     * SPI access to {@code ibv_access_flags}: REMOTE_READ is granted as IBV_ACCESS_REMOTE_READ and only where asked
     * (a remotely writable region is not readable by that), and read-only memory (a file region) never gets
     * LOCAL_WRITE, which ibv_reg_mr refuses on a read-only mapping.
     */
    @Test
    void accessBitsMapToIbvAccessFlags() {
        int lw = Consts.IBV_ACCESS_LOCAL_WRITE;
        assertEquals(lw, VerbsNode.accessFlags(Access.LOCAL_WRITE, false));
        assertEquals(lw, VerbsNode.accessFlags(0, false), "local memory stays a possible RECV or READ target");
        assertEquals(lw | Consts.IBV_ACCESS_REMOTE_WRITE, VerbsNode.accessFlags(Access.ALL, false));
        assertEquals(lw | Consts.IBV_ACCESS_REMOTE_READ,
            VerbsNode.accessFlags(Access.LOCAL_WRITE | Access.REMOTE_READ, false));
        assertEquals(lw | Consts.IBV_ACCESS_REMOTE_WRITE | Consts.IBV_ACCESS_REMOTE_READ,
            VerbsNode.accessFlags(Access.ALL | Access.REMOTE_READ, false));
        assertEquals(Consts.IBV_ACCESS_REMOTE_READ, VerbsNode.accessFlags(Access.REMOTE_READ, true));
        assertEquals(0, VerbsNode.accessFlags(0, true), "a file region used locally: local read needs no flag");
        assertThrows(IllegalArgumentException.class, () -> VerbsNode.accessFlags(Access.ALL, true));
    }

    /** The ACK timeout key: unset is rdma_cm's choice; a bad value is refused with the key and the value named. */
    @Test
    void ackTimeoutIsRdmaCmsUnlessSetAndABadValueIsNamed() {
        assertEquals(-1, VerbsNode.ackTimeout(null));
        assertEquals(-1, VerbsNode.ackTimeout(" "));
        assertEquals(14, VerbsNode.ackTimeout(" 14"));
        assertEquals(31, VerbsNode.ackTimeout("31"));
        for (String bad : new String[] {"0", "32", "-1", "fast"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> VerbsNode.ackTimeout(bad));
            assertTrue(e.getMessage().startsWith(VerbsNode.ACK_TIMEOUT_PROP + "=" + bad + " "), e.getMessage());
        }
    }

    /** The READ depths asked of rdma_cm: the device's, capped, never 0 (a NIC refuses every READ with 0). */
    @Test
    void readDepthsComeFromTheDeviceCappedAndNeverZero() {
        assertEquals(1, VerbsNode.readDepth(0));
        assertEquals(4, VerbsNode.readDepth(4));
        assertEquals(VerbsNode.READ_DEPTH_CAP, VerbsNode.readDepth(128), "rxe reports 128");
        assertEquals(VerbsNode.READ_DEPTH_CAP, VerbsNode.readDepth(VerbsNode.READ_DEPTH_CAP));
    }

    /** The shared setup flow's rdma_cm event numbers are librdmacm's (Native's, checked against the header). */
    @Test
    void theSetupFlowsEventNumbersAreLibrdmacms() {
        assertEquals(Consts.RDMA_CM_EVENT_ADDR_RESOLVED, RdmaCmFlow.ADDR_RESOLVED);
        assertEquals(Consts.RDMA_CM_EVENT_ROUTE_RESOLVED, RdmaCmFlow.ROUTE_RESOLVED);
        assertEquals(Consts.RDMA_CM_EVENT_CONNECT_REQUEST, RdmaCmFlow.CONNECT_REQUEST);
        assertEquals(Consts.RDMA_CM_EVENT_REJECTED, RdmaCmFlow.REJECTED);
        assertEquals(Consts.RDMA_CM_EVENT_ESTABLISHED, RdmaCmFlow.ESTABLISHED);
        assertEquals(Consts.RDMA_CM_EVENT_DISCONNECTED, RdmaCmFlow.DISCONNECTED);
        assertEquals(More.RDMA_CM_EVENT_DEVICE_REMOVAL, RdmaCmFlow.DEVICE_REMOVAL);
        assertEquals(More.RDMA_CM_EVENT_TIMEWAIT_EXIT, RdmaCmFlow.TIMEWAIT_EXIT);
    }
}
