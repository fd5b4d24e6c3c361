package io.rdmx.transport.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.rdmx.transport.ProtocolException;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;

/**
 * Fuzzes {@link SetupMessage#decode}: the verbs/disni setup message arrives from the peer over the new queue
 * pair, so any bytes are possible. Contract: a message or a {@link ProtocolException} whose text names the field
 * ({@code name=value}); nothing else escapes; a decoded message re-encodes to the same fields.
 *
 * <p>Regression inputs: {@code src/test/resources/io/rdmx/transport/internal/SetupMessageFuzzTestInputs/decode}.
 */
class SetupMessageFuzzTest {
    @FuzzTest
    @Timeout(value = 10, unit = TimeUnit.SECONDS)
    void decode(byte[] input) throws ProtocolException {
        // the receive buffer is a slot of the control region: direct, the message at a non-zero position
        ByteBuffer slot = ByteBuffer.allocateDirect(input.length + 8);
        slot.position(8);
        slot.put(input).flip().position(8);
        SetupMessage m;
        try {
            m = SetupMessage.decode(slot);
        } catch (ProtocolException e) {
            assertTrue(e.getMessage().contains("="), () -> "error names no field=value: " + e.getMessage());
            return;
        }
        assertEquals(8, slot.position(), "decode moved the caller's position");
        ByteBuffer again = ByteBuffer.allocate(3 * input.length + 64);
        int len = m.encode(again);
        SetupMessage back = SetupMessage.decode(again.limit(len));
        assertEquals(m.kind, back.kind);
        assertEquals(m.name, back.name);
        assertEquals(m.address, back.address);
        assertEquals(m.regions, back.regions);
        assertEquals(m.reason, back.reason);
        assertEquals(m.probe, back.probe);
    }
}
