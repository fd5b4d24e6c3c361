package io.rdmx.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Availability;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Status;
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
        assertEquals(Status.SUCCESS, Endpoint.mapStatus(Consts.IBV_WC_SUCCESS));
        assertEquals(Status.REMOTE_ACCESS_ERROR, Endpoint.mapStatus(Consts.IBV_WC_REM_ACCESS_ERR));
        assertEquals(Status.LOCAL_LENGTH_ERROR, Endpoint.mapStatus(Consts.IBV_WC_LOC_LEN_ERR));
        assertEquals(Status.REMOTE_INVALID_REQUEST, Endpoint.mapStatus(Consts.IBV_WC_REM_INV_REQ_ERR));
        assertEquals(Status.FLUSHED, Endpoint.mapStatus(Consts.IBV_WC_WR_FLUSH_ERR));
        assertEquals(Status.TRANSPORT_ERROR, Endpoint.mapStatus(More.IBV_WC_RETRY_EXC_ERR));
        assertEquals(Status.TRANSPORT_ERROR, Endpoint.mapStatus(More.IBV_WC_RNR_RETRY_EXC_ERR));
    }

    @Test
    void theCompletionBacklogKeepsItsOrderWhileItGrowsAndWraps() {
        CompletionBacklog b = new CompletionBacklog();
        long next = 0;
        long expected = 0;
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < 50 + 100 * round; i++) { // 50, 150, 250 at once: past 64 and 128, not aligned
                b.add(i % 2 == 0 ? Opcode.RECV : Opcode.SEND, next, Status.SUCCESS, (int) next, (int) -next,
                    i % 3 == 0, i % 5 == 0 ? "d" + next : null);
                next++;
            }
            for (int i = 0; i < 30 + 100 * round; i++) { // leave some behind, so the next round wraps
                int slot = b.first();
                assertEquals(expected, b.wrId(slot));
                assertEquals((int) expected, b.length(slot));
                assertEquals((int) -expected, b.imm(slot));
                assertEquals(Status.SUCCESS, b.status(slot));
                b.remove();
                expected++;
            }
        }
        assertEquals(next - expected, b.size());
        while (!b.isEmpty()) {
            assertEquals(expected++, b.wrId(b.first()));
            b.remove();
        }
        assertEquals(next, expected);
    }
}
