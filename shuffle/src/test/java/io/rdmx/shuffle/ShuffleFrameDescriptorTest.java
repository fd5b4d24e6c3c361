package io.rdmx.shuffle;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.channel.RecordDescriptor;
import io.rdmx.channel.RingBuffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The shuffle's control bit, credits and ends-of-stream as {@link ShuffleFrameDescriptor} derives them from the
 * record header, and the bytes on the wire as they were when they were literals in {@code Worker} and
 * {@code Exchange} ({@code 0x8000}, {@code 0x7FFF}, 8-byte credits, 4-byte ends-of-stream).
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ShuffleFrameDescriptorTest {
    /** The values the shuffle put on the wire before the descriptor: a changed one breaks mixed versions. */
    private static final int OLD_CONTROL = 0x8000;
    private static final int OLD_MAX_ID = 0x7FFF;
    private static final int OLD_CREDIT_LENGTH = 8;
    private static final int OLD_EOS_LENGTH = 4;
    private static final int OLD_CREDIT_MARK = 0x43524454;

    @Test
    void theControlBitIsTheTopBitOfTheRecordHeadersStreamIdField() {
        // the field's width as the header lays it out: from its offset to the next field's
        int fieldBits = 8 * (RecordDescriptor.TYPE_OFFSET - RecordDescriptor.STREAM_OFFSET);
        assertEquals(fieldBits, ShuffleFrameDescriptor.STREAM_BITS,
            "MAX_STREAM_ID=0x" + Integer.toHexString(RecordDescriptor.MAX_STREAM_ID) + " does not fill the "
                + fieldBits + "-bit stream id field: the control bit would not be its top bit");
        assertEquals((1 << fieldBits) - 1, RecordDescriptor.MAX_STREAM_ID, "every stream id of the field is valid");
        assertEquals(1 << (fieldBits - 1), ShuffleFrameDescriptor.CONTROL);
        assertEquals(0, ShuffleFrameDescriptor.CONTROL & ShuffleFrameDescriptor.MAX_EXCHANGE_ID);
        assertEquals(RecordDescriptor.MAX_STREAM_ID,
            ShuffleFrameDescriptor.CONTROL | ShuffleFrameDescriptor.MAX_EXCHANGE_ID);
        assertEquals(ShuffleFrameDescriptor.MAX_EXCHANGE_ID, Exchange.MAX_ID);
    }

    @Test
    void theRecordHeaderCarriesTheControlBitOfTheLargestExchangeThroughARing() {
        RingBuffer ring = TestRings.ring(1024);
        int stream = ShuffleFrameDescriptor.controlStream(Exchange.MAX_ID);
        int at = ring.tryClaim(stream, ShuffleFrameDescriptor.CREDIT_LENGTH);
        ShuffleFrameDescriptor.putCredit(ring.buffer(), at, 4096);
        ring.commit();
        // in the header itself: the stream id field holds all of it
        int header = at - RecordDescriptor.HEADER_LENGTH;
        assertEquals(stream, ring.buffer().getShort(header + RecordDescriptor.STREAM_OFFSET) & 0xFFFF);
        List<TestRings.Rec> got = TestRings.drain(ring);
        assertEquals(1, got.size());
        int read = got.get(0).stream();
        assertEquals(stream, read);
        assertTrue(ShuffleFrameDescriptor.isCredit(read, got.get(0).length()));
        assertEquals(Exchange.MAX_ID, ShuffleFrameDescriptor.exchange(read));
        assertEquals(4096, ShuffleFrameDescriptor.creditBytes(got.get(0).payload(), 0));
        assertEquals(ShuffleFrameDescriptor.CREDIT_MARK, ShuffleFrameDescriptor.creditMark(got.get(0).payload(), 0));
    }

    @Test
    void theConstantsAreTheOldLiterals() {
        assertEquals(OLD_CONTROL, ShuffleFrameDescriptor.CONTROL);
        assertEquals(OLD_MAX_ID, ShuffleFrameDescriptor.MAX_EXCHANGE_ID);
        assertEquals(OLD_MAX_ID, Exchange.MAX_ID);
        assertEquals(OLD_CREDIT_LENGTH, ShuffleFrameDescriptor.CREDIT_LENGTH);
        assertEquals(OLD_EOS_LENGTH, ShuffleFrameDescriptor.EOS_LENGTH);
        assertEquals(OLD_CREDIT_MARK, ShuffleFrameDescriptor.CREDIT_MARK);
    }

    @Test
    void everyStreamIdIsTheOldOne() {
        for (int id = 0; id <= OLD_MAX_ID; id++) {
            Exchange<RowView> ex = TestRings.ints(id);
            assertEquals(id, ex.dataStream(), "data stream of exchange " + id);
            assertEquals(id | OLD_CONTROL, ex.eosStream(), "end-of-stream stream of exchange " + id);
            assertEquals(id | OLD_CONTROL, ShuffleFrameDescriptor.controlStream(id), "credit stream of " + id);
            assertEquals(id, ShuffleFrameDescriptor.exchange(id | OLD_CONTROL));
            assertTrue(ShuffleFrameDescriptor.isControl(id | OLD_CONTROL));
            assertFalse(ShuffleFrameDescriptor.isControl(id));
        }
    }

    @Test
    void controlRecordsAreTheSameBytesInARingAsTheOldCode() {
        // the old code: tryClaim(id | 0x8000, 8), putInt(bytes), putInt(at + 4, 0x43524454); for an end-of-stream
        // tryClaim(id | 0x8000, 4), putInt(worker)
        RingBuffer old = TestRings.ring(1024);
        RingBuffer now = TestRings.ring(1024);
        int id = 0x1234;
        int at = old.tryClaim(id | OLD_CONTROL, OLD_CREDIT_LENGTH);
        old.buffer().putInt(at, 123_456);
        old.buffer().putInt(at + 4, OLD_CREDIT_MARK);
        old.commit();
        at = old.tryClaim(id | OLD_CONTROL, OLD_EOS_LENGTH);
        old.buffer().putInt(at, 7);
        old.commit();

        at = now.tryClaim(ShuffleFrameDescriptor.controlStream(id), ShuffleFrameDescriptor.CREDIT_LENGTH);
        ShuffleFrameDescriptor.putCredit(now.buffer(), at, 123_456);
        now.commit();
        at = now.tryClaim(ShuffleFrameDescriptor.controlStream(id), ShuffleFrameDescriptor.EOS_LENGTH);
        ShuffleFrameDescriptor.putEndOfStream(now.buffer(), at, 7);
        now.commit();

        assertArrayEquals(bytes(old.buffer()), bytes(now.buffer()));
        assertEquals(old.headAcquire(), now.headAcquire());
    }

    @Test
    void aCreditIsToldFromAnEndOfStreamByItsLength() {
        int control = ShuffleFrameDescriptor.controlStream(3);
        assertTrue(ShuffleFrameDescriptor.isCredit(control, 8));
        assertFalse(ShuffleFrameDescriptor.isCredit(control, 4));
        assertFalse(ShuffleFrameDescriptor.isCredit(ShuffleFrameDescriptor.dataStream(3), 8), "8 bytes of rows");
        ByteBuffer b = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
        ShuffleFrameDescriptor.putEndOfStream(b, 0, 5);
        assertEquals(5, ShuffleFrameDescriptor.endOfStreamWorker(b, 0, 4));
        assertEquals(-1, ShuffleFrameDescriptor.endOfStreamWorker(b, 0, 5), "an end-of-stream has 4 bytes");
    }

    @Test
    void aCreditIsValidatedAgainstWhatWasSent() {
        assertNull(ShuffleFrameDescriptor.validateCredit(100, OLD_CREDIT_MARK, 100));
        assertEquals("mark=0x1 (expected 0x43524454)", ShuffleFrameDescriptor.validateCredit(100, 1, 100));
        assertEquals("bytes=101 outside [1, 100] (the uncredited bytes)",
            ShuffleFrameDescriptor.validateCredit(101, OLD_CREDIT_MARK, 100));
        assertEquals("bytes=0 outside [1, 100] (the uncredited bytes)",
            ShuffleFrameDescriptor.validateCredit(0, OLD_CREDIT_MARK, 100));
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] a = new byte[b.capacity()];
        b.get(0, a);
        return a;
    }
}
