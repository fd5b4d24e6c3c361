package io.rdmx.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RemoteRegion;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link ControlMessages}: what it writes decodes to the same values, NOTIFY entries reach the listener in order
 * with their kind, and a malformed message is refused naming the peer and the value before the listener hears
 * anything. (What the channel does with each message: {@code ControlMessageChecksTest}, {@code
 * RawPeerControlChecksTest}.)
 */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class ControlMessagesTest {
    private static final int AT = 64;

    /** Writes down every call. */
    private static final class Recorder implements ControlMessages.Listener {
        final List<String> calls = new ArrayList<>();

        @Override
        public void onHello(int workers, int capacity, int mode, int flags) {
            calls.add("hello " + workers + " " + capacity + " " + mode + " " + flags);
        }

        @Override
        public void onRegion(RemoteRegion r) {
            calls.add("region " + r.address() + " " + r.length() + " " + r.remoteKey());
        }

        @Override
        public void onBye(String reason) {
            calls.add(reason == null ? "bye" : "bye " + reason);
        }

        @Override
        public void onData(int ring, long position) {
            calls.add("data " + ring + " " + position);
        }

        @Override
        public void onCredit(int ring, long position) {
            calls.add("credit " + ring + " " + position);
        }
    }

    private static ByteBuffer slot() {
        return ByteBuffer.allocate(AT + NotificationDescriptor.MESSAGE_SLOT);
    }

    @Test
    void helloRegionAndByeDecodeToWhatWasWritten() throws RdmxException {
        ByteBuffer b = slot();
        Recorder r = new Recorder();
        int len = ControlMessages.hello(b, AT, 3, 1 << 16, ChannelConfig.Notification.WRITE_WITH_IMM, true);
        ControlMessages.decode("p", b, AT, len, 0, r);
        len = ControlMessages.region(b, AT, new RemoteRegion(0x1234_5678_9AL, 4096, 77));
        ControlMessages.decode("p", b, AT, len, 0, r);
        len = ControlMessages.bye(b, AT, null);
        assertEquals(NotificationDescriptor.BYE_LENGTH, len);
        ControlMessages.decode("p", b, AT, len, 0, r);
        len = ControlMessages.bye(b, AT, "rank 1 ('job-r1') was lost: \u00e9t\u00e9\nnext line");
        ControlMessages.decode("p", b, AT, len, 0, r);
        assertEquals(List.of("hello 3 65536 " + ChannelConfig.Notification.WRITE_WITH_IMM.ordinal() + " "
            + NotificationDescriptor.FLAG_MAPPED, "region " + 0x1234_5678_9AL + " 4096 77", "bye",
            "bye rank 1 ('job-r1') was lost: \u00e9t\u00e9 next line"), r.calls);
    }

    /**
     * A BYE's reason (issue 42: why a peer closes, when that is a third peer's failure) is cut to
     * {@link NotificationDescriptor#MAX_BYE_REASON} bytes on a character boundary; one whose length field does
     * not match the message, that is longer than that, not UTF-8 or holds a control character is refused naming
     * what is wrong.
     */
    @Test
    void aByeReasonIsBoundedAndCheckedText() throws RdmxException {
        ByteBuffer b = slot();
        Recorder r = new Recorder();
        String longReason = "\u00e9".repeat(NotificationDescriptor.MAX_BYE_REASON); // 2 bytes each
        int len = ControlMessages.bye(b, AT, longReason);
        assertEquals(NotificationDescriptor.BYE_LENGTH + NotificationDescriptor.MAX_BYE_REASON, len);
        ControlMessages.decode("p", b, AT, len, 0, r);
        assertEquals(List.of("bye " + "\u00e9".repeat(NotificationDescriptor.MAX_BYE_REASON / 2)), r.calls);
        r.calls.clear();

        int four = ControlMessages.bye(b, AT, "abcd");
        RdmxException e = assertThrows(RdmxException.class, () -> ControlMessages.decode("node-b", b, AT, four - 1,
            0, r));
        assertEquals("bad control message from 'node-b': BYE length=11 (expected 8 + the reason's 4 bytes)",
            e.getMessage());
        b.put(AT + NotificationDescriptor.BYE_REASON_OFFSET + 1, (byte) 0x0A);
        e = assertThrows(RdmxException.class, () -> ControlMessages.decode("node-b", b, AT, four, 0, r));
        assertEquals("bad control message from 'node-b': BYE reason is not UTF-8 text without control characters",
            e.getMessage());
        b.put(AT + NotificationDescriptor.BYE_REASON_OFFSET + 1, (byte) 0xC3); // a lead byte without its follower
        e = assertThrows(RdmxException.class, () -> ControlMessages.decode("node-b", b, AT, four, 0, r));
        assertEquals("bad control message from 'node-b': BYE reason is not UTF-8 text without control characters",
            e.getMessage());
        NotificationDescriptor.header(b, AT, NotificationDescriptor.TYPE_BYE, NotificationDescriptor.MAX_BYE_REASON
            + 1);
        e = assertThrows(RdmxException.class, () -> ControlMessages.decode("node-b", b, AT,
            NotificationDescriptor.BYE_LENGTH + NotificationDescriptor.MAX_BYE_REASON + 1, 0, r));
        assertEquals("bad control message from 'node-b': BYE reason length=1025 (at most 1024)", e.getMessage());
        assertTrue(r.calls.isEmpty(), String.valueOf(r.calls));
    }

    @Test
    void notifyEntriesReachTheListenerInOrder() throws RdmxException {
        ByteBuffer b = slot();
        NotificationDescriptor.header(b, AT, NotificationDescriptor.TYPE_NOTIFY, 3);
        NotificationDescriptor.entry(b, AT, 0, NotificationDescriptor.KIND_DATA, 5, 4096);
        NotificationDescriptor.entry(b, AT, 1, NotificationDescriptor.KIND_CREDIT, 0, 8);
        NotificationDescriptor.entry(b, AT, 2, NotificationDescriptor.KIND_DATA, 5, Long.MAX_VALUE);
        Recorder r = new Recorder();
        ControlMessages.decode("p", b, AT, NotificationDescriptor.HEADER_LENGTH + 3
            * NotificationDescriptor.ENTRY_LENGTH, 6, r);
        assertEquals(List.of("data 5 4096", "credit 0 8", "data 5 " + Long.MAX_VALUE), r.calls);
    }

    @Test
    void aMalformedMessageIsRefusedBeforeTheListenerHearsAnything() {
        ByteBuffer b = slot();
        NotificationDescriptor.header(b, AT, NotificationDescriptor.TYPE_NOTIFY, 2);
        NotificationDescriptor.entry(b, AT, 0, NotificationDescriptor.KIND_DATA, 1, 64);
        NotificationDescriptor.entry(b, AT, 1, NotificationDescriptor.KIND_DATA, 9, 64);
        Recorder r = new Recorder();
        RdmxException e = assertThrows(RdmxException.class, () -> ControlMessages.decode("node-b", b, AT,
            NotificationDescriptor.HEADER_LENGTH + 2 * NotificationDescriptor.ENTRY_LENGTH, 4, r));
        assertEquals("bad control message from 'node-b': NOTIFY entry 1 has ring=9 >= rings=4", e.getMessage());
        assertTrue(r.calls.isEmpty(), "the first, valid entry must not be applied either: " + r.calls);

        int hello = ControlMessages.hello(b, AT, 1, 64, ChannelConfig.Notification.SEND, false);
        e = assertThrows(RdmxException.class, () -> ControlMessages.decode("node-b", b, AT, hello - 4, 0, r));
        assertEquals("bad control message from 'node-b': HELLO length=20 (expected 24)", e.getMessage());
        assertTrue(r.calls.isEmpty(), String.valueOf(r.calls));

        int region = ControlMessages.region(b, AT, new RemoteRegion(1, 64, 2));
        b.duplicate().order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(AT + NotificationDescriptor.REGION_OFFSET
            + RemoteRegion.LENGTH_OFFSET, -5);
        e = assertThrows(RdmxException.class, () -> ControlMessages.decode("node-b", b, AT, region, 0, r));
        assertEquals("bad control message from 'node-b': REGION negative region length=-5", e.getMessage());
        assertTrue(r.calls.isEmpty(), String.valueOf(r.calls));
    }
}
