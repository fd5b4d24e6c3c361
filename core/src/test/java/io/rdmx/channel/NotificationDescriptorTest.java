package io.rdmx.channel;

import static io.rdmx.channel.NotificationDescriptor.ENTRY_KIND_OFFSET;
import static io.rdmx.channel.NotificationDescriptor.ENTRY_LENGTH;
import static io.rdmx.channel.NotificationDescriptor.ENTRY_POSITION_OFFSET;
import static io.rdmx.channel.NotificationDescriptor.ENTRY_RING_OFFSET;
import static io.rdmx.channel.NotificationDescriptor.HEADER_LENGTH;
import static io.rdmx.channel.NotificationDescriptor.HELLO_LENGTH;
import static io.rdmx.channel.NotificationDescriptor.KIND_CREDIT;
import static io.rdmx.channel.NotificationDescriptor.KIND_DATA;
import static io.rdmx.channel.NotificationDescriptor.MAX_ENTRIES;
import static io.rdmx.channel.NotificationDescriptor.MESSAGE_SLOT;
import static io.rdmx.channel.NotificationDescriptor.REGION_LENGTH;
import static io.rdmx.channel.NotificationDescriptor.TYPE_HELLO;
import static io.rdmx.channel.NotificationDescriptor.TYPE_NOTIFY;
import static io.rdmx.channel.NotificationDescriptor.TYPE_REGION;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Control messages: what is written reads back field by field, and every malformed field is named. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class NotificationDescriptorTest {
    private static final int RINGS = 6;

    /** A little-endian buffer full of 0xFF, so fields the writer forgets to clear show up. */
    private static ByteBuffer dirty(int capacity) {
        ByteBuffer b = ByteBuffer.allocate(capacity).order(ByteOrder.LITTLE_ENDIAN);
        byte[] ff = new byte[capacity];
        Arrays.fill(ff, (byte) 0xFF);
        b.put(0, ff);
        return b;
    }

    private static int entryAt(int at, int i) {
        return at + HEADER_LENGTH + i * ENTRY_LENGTH;
    }

    private static ByteBuffer notify(int at, int count) {
        ByteBuffer b = dirty(at + HEADER_LENGTH + count * ENTRY_LENGTH);
        NotificationDescriptor.header(b, at, TYPE_NOTIFY, count);
        for (int i = 0; i < count; i++) {
            NotificationDescriptor.entry(b, at, i, i % 2 == 0 ? KIND_DATA : KIND_CREDIT, i % RINGS, i * 1000L);
        }
        return b;
    }

    private static void assertRejected(String reason, String... mustContain) {
        assertNotNull(reason, "must be rejected");
        for (String s : mustContain) {
            assertTrue(reason.contains(s), "'" + reason + "' should name " + s);
        }
    }

    @Test
    void headerReadsBackFieldByFieldAtTheDiagramOffsets() {
        ByteBuffer b = dirty(64);
        NotificationDescriptor.header(b, 16, TYPE_NOTIFY, 0x1234);
        assertEquals(TYPE_NOTIFY, b.get(16));
        assertEquals(NotificationDescriptor.VERSION, b.get(17));
        assertEquals(0x34, b.get(18), "count is little endian");
        assertEquals(0x12, b.get(19));
        assertEquals(0, b.getInt(20), "reserved word cleared");
        assertEquals((byte) 0xFF, b.get(15), "nothing written before the message");
        assertEquals((byte) 0xFF, b.get(24), "nothing written after the header");
    }

    @Test
    void headerCountZeroAndTheLargestSixteenBitCountReadBackUnsigned() {
        ByteBuffer b = dirty(HEADER_LENGTH);
        NotificationDescriptor.header(b, 0, TYPE_NOTIFY, 0);
        assertEquals(0, b.getShort(NotificationDescriptor.COUNT_OFFSET) & 0xFFFF);
        NotificationDescriptor.header(b, 0, TYPE_NOTIFY, 0xFFFF);
        assertEquals(0xFFFF, b.getShort(NotificationDescriptor.COUNT_OFFSET) & 0xFFFF);
    }

    @Test
    void entryReadsBackFieldByFieldIncludingTheBoundaries() {
        int at = 8;
        ByteBuffer b = dirty(at + HEADER_LENGTH + 3 * ENTRY_LENGTH);
        NotificationDescriptor.entry(b, at, 0, KIND_DATA, 0, 0L);
        NotificationDescriptor.entry(b, at, 1, KIND_CREDIT, 0xFFFF, Long.MAX_VALUE);
        NotificationDescriptor.entry(b, at, 2, KIND_DATA, 0x0102, 0x0807060504030201L);
        int e0 = entryAt(at, 0);
        assertEquals(KIND_DATA, b.get(e0 + ENTRY_KIND_OFFSET));
        assertEquals(0, b.get(e0 + 1), "reserved byte cleared");
        assertEquals(0, b.getShort(e0 + ENTRY_RING_OFFSET));
        assertEquals(0, b.getInt(e0 + 4), "reserved word cleared");
        assertEquals(0L, b.getLong(e0 + ENTRY_POSITION_OFFSET));
        int e1 = entryAt(at, 1);
        assertEquals(KIND_CREDIT, b.get(e1 + ENTRY_KIND_OFFSET));
        assertEquals(0xFFFF, b.getShort(e1 + ENTRY_RING_OFFSET) & 0xFFFF, "the last ring index of 256 x 256");
        assertEquals(Long.MAX_VALUE, b.getLong(e1 + ENTRY_POSITION_OFFSET));
        int e2 = entryAt(at, 2);
        assertEquals(0x02, b.get(e2 + ENTRY_RING_OFFSET), "ring index little endian");
        assertEquals(0x01, b.get(e2 + ENTRY_POSITION_OFFSET), "position little endian");
        assertEquals(0x08, b.get(e2 + ENTRY_POSITION_OFFSET + 7));
        assertEquals(b.capacity(), e2 + ENTRY_LENGTH, "the last entry ends on the buffer's last byte");
        assertEquals((byte) 0xFF, b.get(at + HEADER_LENGTH - 1), "entries start after the header");
    }

    @Test
    void wellFormedMessagesOfEveryTypeAreAccepted() {
        ByteBuffer b = dirty(HELLO_LENGTH);
        NotificationDescriptor.header(b, 0, TYPE_HELLO, 0);
        assertNull(NotificationDescriptor.validate(b, 0, HELLO_LENGTH, RINGS));
        NotificationDescriptor.header(b, 0, TYPE_REGION, 0);
        assertNull(NotificationDescriptor.validate(b, 0, REGION_LENGTH, RINGS));
        assertNull(NotificationDescriptor.validate(notify(0, 0), 0, HEADER_LENGTH, RINGS), "an empty NOTIFY");
        assertNull(NotificationDescriptor.validate(notify(24, 5), 24, HEADER_LENGTH + 5 * ENTRY_LENGTH, RINGS));
    }

    @Test
    void aFullSlotOfEntriesIsValidAndFitsTheSlot() {
        int length = HEADER_LENGTH + MAX_ENTRIES * ENTRY_LENGTH;
        assertTrue(length <= MESSAGE_SLOT && length + ENTRY_LENGTH > MESSAGE_SLOT, "MAX_ENTRIES fills a slot");
        ByteBuffer b = notify(MESSAGE_SLOT, MAX_ENTRIES);
        assertEquals(MESSAGE_SLOT + length, b.capacity());
        assertNull(NotificationDescriptor.validate(b, MESSAGE_SLOT, length, RINGS),
            "a message in the second slot, ending on the buffer's last byte");
    }

    @Test
    void theLastRingAndTheLargestPositionAreAcceptedOneRingMoreIsNot() {
        ByteBuffer b = dirty(HEADER_LENGTH + ENTRY_LENGTH);
        NotificationDescriptor.header(b, 0, TYPE_NOTIFY, 1);
        NotificationDescriptor.entry(b, 0, 0, KIND_CREDIT, RINGS - 1, Long.MAX_VALUE);
        assertNull(NotificationDescriptor.validate(b, 0, b.capacity(), RINGS));
        NotificationDescriptor.entry(b, 0, 0, KIND_CREDIT, 0xFFFF, 0);
        assertNull(NotificationDescriptor.validate(b, 0, b.capacity(), 1 << 16), "ring 65535 of 65536");
        NotificationDescriptor.entry(b, 0, 0, KIND_DATA, RINGS, 0);
        assertRejected(NotificationDescriptor.validate(b, 0, b.capacity(), RINGS), "entry 0", "ring=" + RINGS,
            "rings=" + RINGS);
    }

    @Test
    void messageShorterThanTheHeaderIsRejected() {
        ByteBuffer b = dirty(HEADER_LENGTH);
        NotificationDescriptor.header(b, 0, TYPE_HELLO, 0);
        assertRejected(NotificationDescriptor.validate(b, 0, HEADER_LENGTH - 1, RINGS), "length=7",
            "header length=8");
        assertRejected(NotificationDescriptor.validate(b, 0, 0, RINGS), "length=0");
    }

    @Test
    void otherVersionsAreRejected() {
        ByteBuffer b = dirty(HELLO_LENGTH);
        NotificationDescriptor.header(b, 0, TYPE_HELLO, 0);
        b.put(NotificationDescriptor.VERSION_OFFSET, (byte) 0);
        assertRejected(NotificationDescriptor.validate(b, 0, HELLO_LENGTH, RINGS), "version=0");
        b.put(NotificationDescriptor.VERSION_OFFSET, (byte) 0xFF);
        assertRejected(NotificationDescriptor.validate(b, 0, HELLO_LENGTH, RINGS), "version=255");
    }

    @Test
    void unknownTypesAreRejected() {
        ByteBuffer b = dirty(HELLO_LENGTH);
        NotificationDescriptor.header(b, 0, 0, 0);
        assertRejected(NotificationDescriptor.validate(b, 0, HELLO_LENGTH, RINGS), "type=0");
        NotificationDescriptor.header(b, 0, 0xFF, 0);
        assertRejected(NotificationDescriptor.validate(b, 0, HELLO_LENGTH, RINGS), "type=255");
    }

    @Test
    void helloAndRegionOfTheWrongLengthAreRejected() {
        ByteBuffer b = dirty(HELLO_LENGTH + 1);
        NotificationDescriptor.header(b, 0, TYPE_HELLO, 0);
        assertRejected(NotificationDescriptor.validate(b, 0, HELLO_LENGTH - 1, RINGS), "HELLO length=23");
        assertRejected(NotificationDescriptor.validate(b, 0, HELLO_LENGTH + 1, RINGS), "HELLO length=25");
        NotificationDescriptor.header(b, 0, TYPE_REGION, 0);
        assertRejected(NotificationDescriptor.validate(b, 0, REGION_LENGTH - 1, RINGS), "REGION length=23");
        assertRejected(NotificationDescriptor.validate(b, 0, HEADER_LENGTH, RINGS), "REGION length=8");
    }

    @Test
    void notifyWhoseCountDisagreesWithItsLengthIsRejected() {
        ByteBuffer b = notify(0, 2);
        int length = HEADER_LENGTH + 2 * ENTRY_LENGTH;
        assertRejected(NotificationDescriptor.validate(b, 0, length - 1, RINGS), "count=2", "length=" + (length - 1));
        assertRejected(NotificationDescriptor.validate(b, 0, length - ENTRY_LENGTH, RINGS), "count=2",
            "length=" + (length - ENTRY_LENGTH));
        NotificationDescriptor.header(b, 0, TYPE_NOTIFY, 3);
        assertRejected(NotificationDescriptor.validate(b, 0, length, RINGS), "count=3", "length=" + length);
    }

    @Test
    void notifyEntryOfUnknownKindIsRejectedNamingTheEntry() {
        ByteBuffer b = notify(0, 3);
        b.put(entryAt(0, 2) + ENTRY_KIND_OFFSET, (byte) 0);
        assertRejected(NotificationDescriptor.validate(b, 0, b.capacity(), RINGS), "entry 2", "kind=0");
        b.put(entryAt(0, 2) + ENTRY_KIND_OFFSET, (byte) 3);
        assertRejected(NotificationDescriptor.validate(b, 0, b.capacity(), RINGS), "entry 2", "kind=3");
    }

    @Test
    void notifyEntryWithANegativePositionIsRejected() {
        ByteBuffer b = notify(0, 2);
        b.putLong(entryAt(0, 1) + ENTRY_POSITION_OFFSET, -1L);
        assertRejected(NotificationDescriptor.validate(b, 0, b.capacity(), RINGS), "entry 1", "position=-1");
        b.putLong(entryAt(0, 1) + ENTRY_POSITION_OFFSET, Long.MIN_VALUE);
        assertRejected(NotificationDescriptor.validate(b, 0, b.capacity(), RINGS),
            "position=" + Long.MIN_VALUE);
    }
}
