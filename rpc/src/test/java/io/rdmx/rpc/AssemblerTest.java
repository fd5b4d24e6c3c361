package io.rdmx.rpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Frame validation and reassembly, without a channel. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class AssemblerTest {
    private final List<String> events = new ArrayList<>();
    private final List<byte[]> bodies = new ArrayList<>();
    private final Assembler.Sink sink = new Assembler.Sink() {
        @Override
        public void message(int kind, int method, long callId, long hi, long lo, byte[] body) {
            events.add("message " + RpcFrameDescriptor.kindName(kind) + " m=" + method + " id=" + callId + " hi=" + hi
                + " lo=" + lo + " len=" + body.length);
            bodies.add(body);
        }

        @Override
        public void tooLarge(int kind, int method, long callId, long size, long limit, String what) {
            events.add("tooLarge id=" + callId + " size=" + size + " limit=" + limit);
        }
    };

    private static ByteBuffer frame(int kind, boolean last, long callId, int total, int offset, byte[] body,
                                    int from, int n) {
        int h = RpcFrameDescriptor.headerLength(kind);
        ByteBuffer b = ByteBuffer.allocate(8 + h + n).order(ByteOrder.LITTLE_ENDIAN);
        RpcFrameDescriptor.putHeader(b, 8, kind, last, 5, callId, total, offset, 11, 12);
        b.put(8 + h, body, from, n);
        return b;
    }

    private void feed(Assembler a, ByteBuffer f) throws RpcProtocolException {
        a.onFrame(f, 8, f.capacity() - 8, sink);
    }

    @Test
    void interleavedFragmentsOfTwoCallsAreReassembledByCallId() throws Exception {
        Assembler a = new Assembler("peer-x", 1000, true);
        byte[] one = RpcSuite.body(250, 1);
        byte[] two = RpcSuite.body(130, 2);
        int r = RpcFrameDescriptor.KIND_REQUEST;
        feed(a, frame(r, false, 1, 250, 0, one, 0, 100));
        feed(a, frame(r, false, 2, 130, 0, two, 0, 100));
        feed(a, frame(r, false, 1, 250, 100, one, 100, 100));
        feed(a, frame(r, true, 2, 130, 100, two, 100, 30));
        assertEquals(1, a.partials());
        feed(a, frame(r, true, 1, 250, 200, one, 200, 50));
        assertEquals(List.of("message REQUEST m=5 id=2 hi=11 lo=12 len=130", "message REQUEST m=5 id=1 hi=11 lo=12"
            + " len=250"), events);
        assertArrayEquals(two, bodies.get(0));
        assertArrayEquals(one, bodies.get(1));
        assertEquals(0, a.partials());
    }

    @Test
    void anOversizedMessageIsRefusedOnceAndItsFragmentsSkipped() throws Exception {
        Assembler a = new Assembler("peer-x", 100, false);
        byte[] big = new byte[150];
        int k = RpcFrameDescriptor.KIND_RESPONSE;
        feed(a, frame(k, false, 9, 150, 0, big, 0, 80));
        feed(a, frame(k, true, 9, 150, 80, big, 80, 70));
        feed(a, frame(k, true, 10, 3, 0, big, 0, 3));
        assertEquals(List.of("tooLarge id=9 size=150 limit=100", "message RESPONSE m=5 id=10 hi=0 lo=0 len=3"), events);
        assertEquals(0, a.partials());
    }

    @Test
    void partialMessagesOfOnePeerAreBoundedToTwiceTheMaximum() throws Exception {
        Assembler a = new Assembler("peer-x", 100, true);
        byte[] b = new byte[100];
        int r = RpcFrameDescriptor.KIND_REQUEST;
        feed(a, frame(r, false, 1, 100, 0, b, 0, 10));
        feed(a, frame(r, false, 2, 100, 0, b, 0, 10));
        feed(a, frame(r, false, 3, 100, 0, b, 0, 10));
        assertEquals(1, events.size());
        assertTrue(events.get(0).startsWith("tooLarge id=3 size=300 limit=200"), events.get(0));
    }

    @Test
    void orderViolationsNameThePeerAndValue() throws Exception {
        int r = RpcFrameDescriptor.KIND_REQUEST;
        byte[] b = new byte[100];
        Assembler a = new Assembler("peer-x", 1000, true);
        feed(a, frame(r, false, 1, 100, 0, b, 0, 10));
        RpcProtocolException twice = assertThrows(RpcProtocolException.class,
            () -> feed(a, frame(r, false, 1, 100, 0, b, 0, 10)));
        assertTrue(twice.getMessage().contains("peer 'peer-x'") && twice.getMessage().contains("call id=1 started"
            + " again"), twice.getMessage());
        RpcProtocolException mismatch = assertThrows(RpcProtocolException.class,
            () -> feed(a, frame(r, false, 1, 99, 10, b, 10, 10)));
        assertTrue(mismatch.getMessage().contains("message length=99/100"), mismatch.getMessage());
        Assembler client = new Assembler("server-y", 1000, false);
        RpcProtocolException kind = assertThrows(RpcProtocolException.class,
            () -> feed(client, frame(r, true, 1, 1, 0, b, 0, 1)));
        assertTrue(kind.getMessage().contains("kind=REQUEST where responses are expected"), kind.getMessage());
    }

    /** An ABORT frame drops what is held of its message; one with fragment bytes, or also LAST, is malformed. */
    @Test
    void anAbortDropsThePartialMessageAndIsCheckedLikeAnyFrame() throws Exception {
        Assembler a = new Assembler("peer-x", 1000, true);
        byte[] b = new byte[100];
        int r = RpcFrameDescriptor.KIND_REQUEST;
        feed(a, frame(r, false, 1, 100, 0, b, 0, 10));
        assertEquals(1, a.partials());
        assertTrue(a.held() > 0);
        ByteBuffer abort = frame(r, false, 1, 100, 10, b, 0, 0);
        abort.put(8 + RpcFrameDescriptor.FLAGS_OFFSET, (byte) (r | RpcFrameDescriptor.FLAG_ABORT));
        feed(a, abort);
        assertEquals(0, a.partials());
        assertEquals(0, a.held());
        feed(a, abort.duplicate().order(ByteOrder.LITTLE_ENDIAN)); // again, or for a message not held: nothing
        ByteBuffer withBytes = frame(r, false, 2, 100, 0, b, 0, 10);
        withBytes.put(8 + RpcFrameDescriptor.FLAGS_OFFSET, (byte) (r | RpcFrameDescriptor.FLAG_ABORT));
        assertEquals("ABORT frame with fragment length=10", RpcFrameDescriptor.validate(withBytes, 8, 40 + 10, true));
        ByteBuffer alsoLast = frame(r, true, 3, 0, 0, b, 0, 0);
        alsoLast.put(8 + RpcFrameDescriptor.FLAGS_OFFSET,
            (byte) (r | RpcFrameDescriptor.FLAG_LAST | RpcFrameDescriptor.FLAG_ABORT));
        assertEquals("flags=0xd", RpcFrameDescriptor.validate(alsoLast, 8, 40, true));
    }

    @Test
    void validateNamesEachBadField() {
        ByteBuffer f = frame(RpcFrameDescriptor.KIND_RESPONSE, true, 1, 4, 0, new byte[4], 0, 4);
        assertNull(RpcFrameDescriptor.validate(f, 8, 28, false));
        ByteBuffer flags = f.duplicate().order(ByteOrder.LITTLE_ENDIAN).put(8 + 1, (byte) 0x44);
        assertEquals("flags=0x44", RpcFrameDescriptor.validate(flags, 8, 28, false));
        ByteBuffer reserved = frame(RpcFrameDescriptor.KIND_RESPONSE, true, 1, 4, 0, new byte[4], 0, 4);
        reserved.putShort(8 + 2, (short) 3);
        assertEquals("reserved=3", RpcFrameDescriptor.validate(reserved, 8, 28, false));
        ByteBuffer notLast = frame(RpcFrameDescriptor.KIND_RESPONSE, false, 1, 4, 0, new byte[4], 0, 4);
        assertTrue(RpcFrameDescriptor.validate(notLast, 8, 28, false).startsWith("LAST=false"));
        ByteBuffer negative = frame(RpcFrameDescriptor.KIND_RESPONSE, true, 1, -1, 0, new byte[0], 0, 0);
        assertEquals("message length=-1", RpcFrameDescriptor.validate(negative, 8, 24, false));
    }

    @Test
    void errorBodiesRoundTripAndAreCutToTheirBound() {
        ByteBuffer b = RpcFrameDescriptor.errorBody("java.io.IOException", "disk full", 1000);
        byte[] a = new byte[b.remaining()];
        b.get(a);
        assertArrayEquals(new String[] {"java.io.IOException", "disk full"}, RpcFrameDescriptor.parseError(a));
        ByteBuffer cut = RpcFrameDescriptor.errorBody("x.Y", "0123456789", 8);
        assertEquals(8, cut.remaining());
        byte[] c = Arrays.copyOf(cut.array(), 8);
        assertArrayEquals(new String[] {"x.Y", "012"}, RpcFrameDescriptor.parseError(c));
        assertNull(RpcFrameDescriptor.parseError(new byte[] {0, 0}));
    }

    @Test
    void configIsValidatedOnceNamingKeyAndValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> RpcConfig.builder().maxOutstandingCalls(1000).build());
        assertTrue(e.getMessage().startsWith("rdmx.rpc.maxOutstandingCalls=1000"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> RpcConfig.builder().maxMessageBytes(0).build());
        assertTrue(e.getMessage().startsWith("rdmx.rpc.maxMessageBytes=0"), e.getMessage());
        assertEquals(64 << 20, RpcConfig.defaults().maxMessageBytes());
    }
}
