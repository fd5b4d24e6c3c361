package io.rdmx.transport.wire;

import static io.rdmx.transport.wire.FrameDescriptor.FLAG_PLACED;
import static io.rdmx.transport.wire.FrameDescriptor.FLAG_UNSIGNALED;
import static io.rdmx.transport.wire.FrameDescriptor.FLAG_WITH_IMM;
import static io.rdmx.transport.wire.FrameDescriptor.requestFlags;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rdmx.transport.Opcode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The request frame flags both stream providers send ({@link FrameDescriptor#requestFlags}). */
@Timeout(10)
class RequestFlagsTest {

    @Test
    void unsignaledAsksForNoAckOnlyWhileTheQueueIsLessThanHalfFull() {
        assertEquals(FLAG_UNSIGNALED, requestFlags(Opcode.SEND, false, false, 1, 8));
        assertEquals(FLAG_UNSIGNALED, requestFlags(Opcode.SEND, false, false, 3, 8));
        assertEquals(0, requestFlags(Opcode.SEND, false, false, 4, 8), "half full: every frame asks for an ACK");
        assertEquals(0, requestFlags(Opcode.SEND, true, false, 1, 8), "a signaled request asks for its ACK");
        assertEquals(0, requestFlags(Opcode.SEND, false, false, 1, 1), "a depth of 1 never skips the ACK");
    }

    @Test
    void writesCarryImmediateAndPlacementAndPlacedFramesAlwaysAskForAnAck() {
        assertEquals(FLAG_UNSIGNALED, requestFlags(Opcode.WRITE, false, false, 1, 8));
        assertEquals(FLAG_WITH_IMM, requestFlags(Opcode.WRITE_WITH_IMM, true, false, 1, 8));
        assertEquals(FLAG_PLACED, requestFlags(Opcode.WRITE, false, true, 1, 8));
        assertEquals(FLAG_WITH_IMM | FLAG_PLACED, requestFlags(Opcode.WRITE_WITH_IMM, false, true, 1, 8));
        assertEquals(0, requestFlags(Opcode.SEND, false, true, 1, 8), "a SEND is never placed");
    }
}
