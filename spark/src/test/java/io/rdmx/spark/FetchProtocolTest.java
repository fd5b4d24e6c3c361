package io.rdmx.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class FetchProtocolTest {
    @Test
    void aRequestReadsBackItsFields() {
        ByteBuffer b = FetchProtocol.request(3, 1L << 40, 7, 123_456_789_012L, 4096);
        assertEquals(FetchProtocol.LENGTH, b.remaining());
        assertNull(FetchProtocol.validate(b, 4096));
        assertEquals(3, FetchProtocol.shuffleId(b));
        assertEquals(1L << 40, FetchProtocol.mapId(b));
        assertEquals(7, FetchProtocol.reduceId(b));
        assertEquals(123_456_789_012L, FetchProtocol.offset(b));
        assertEquals(4096, FetchProtocol.length(b));
        assertEquals("shuffle_3_1099511627776_7", FetchProtocol.blockName(3, 1L << 40, 7));
    }

    @Test
    void aBatchRequestReadsBackItsRangeAndOneBlockIsAPlainRequest() {
        ByteBuffer b = FetchProtocol.request(3, 9, 2, 6, 100, 4096);
        assertEquals(FetchProtocol.BATCH_LENGTH, b.remaining());
        assertEquals(FetchProtocol.METHOD_FETCH_BATCH, FetchProtocol.method(b));
        assertNull(FetchProtocol.validate(FetchProtocol.METHOD_FETCH_BATCH, b, 4096));
        assertEquals(2, FetchProtocol.reduceId(b));
        assertEquals(6, FetchProtocol.endReduceId(FetchProtocol.METHOD_FETCH_BATCH, b));
        assertEquals(100, FetchProtocol.offset(b));
        ByteBuffer one = FetchProtocol.request(3, 9, 2, 3, 0, 4096);
        assertEquals(FetchProtocol.LENGTH, one.remaining());
        assertEquals(FetchProtocol.METHOD_FETCH, FetchProtocol.method(one));
        assertEquals(3, FetchProtocol.endReduceId(FetchProtocol.METHOD_FETCH, one));
        ByteBuffer empty = FetchProtocol.request(3, 9, 2, 6, 0, 4096).putInt(FetchProtocol.END_REDUCE_OFFSET, 2);
        assertEquals("endReduceId=2 is not above reduceId=2",
            FetchProtocol.validate(FetchProtocol.METHOD_FETCH_BATCH, empty, 4096));
        assertEquals("batch fetch request length=32 expected=36",
            FetchProtocol.validate(FetchProtocol.METHOD_FETCH_BATCH, one, 4096));
    }

    @Test
    void badRequestsAreNamedWithTheirValue() {
        assertEquals("length=4097 out of range [1, 4096]",
            FetchProtocol.validate(FetchProtocol.request(1, 2, 3, 0, 4097), 4096));
        assertEquals("length=0 out of range [1, 4096]",
            FetchProtocol.validate(FetchProtocol.request(1, 2, 3, 0, 0), 4096));
        assertEquals("shuffleId=-1 is negative", FetchProtocol.validate(FetchProtocol.request(-1, 2, 3, 0, 1), 9));
        assertEquals("mapId=-2 is negative", FetchProtocol.validate(FetchProtocol.request(1, -2, 3, 0, 1), 9));
        assertEquals("reduceId=-3 is negative", FetchProtocol.validate(FetchProtocol.request(1, 2, -3, 0, 1), 9));
        assertEquals("offset=-4 is negative", FetchProtocol.validate(FetchProtocol.request(1, 2, 3, -4, 1), 9));
        ByteBuffer v2 = FetchProtocol.request(1, 2, 3, 0, 1);
        v2.putInt(FetchProtocol.VERSION_OFFSET, 2);
        assertEquals("fetch request version=2 expected=1", FetchProtocol.validate(v2, 9));
        assertEquals("fetch request length=31 expected=32", FetchProtocol.validate(ByteBuffer.allocate(31), 9));
    }

    @Test
    void anAnswerMustHoldWhatItsSizeAndTheRequestImply() {
        byte[] whole = ByteBuffer.allocate(8 + 10).putLong(10).array();
        assertNull(FetchProtocol.validateAnswer(whole, 0, 4096));
        assertEquals(10, FetchProtocol.answerSize(whole));
        byte[] tail = ByteBuffer.allocate(8 + 4).putLong(10).array();
        assertNull(FetchProtocol.validateAnswer(tail, 6, 4096));
        assertTrue(FetchProtocol.validateAnswer(tail, 0, 4096).startsWith("answer length=12 expected=18"));
        // past the end (a chunk the estimate over-counted): the size alone, and nothing else will do
        byte[] past = ByteBuffer.allocate(8).putLong(10).array();
        assertNull(FetchProtocol.validateAnswer(past, 10, 4096));
        assertNull(FetchProtocol.validateAnswer(past, 11, 4096));
        assertTrue(FetchProtocol.validateAnswer(tail, 11, 4096).startsWith("answer length=12 expected=8"));
        assertEquals("block size=-1 is negative",
            FetchProtocol.validateAnswer(ByteBuffer.allocate(8).putLong(-1).array(), 0, 4096));
        assertEquals("answer length=3 shorter than its header=8", FetchProtocol.validateAnswer(new byte[3], 0, 1));
    }

    @Test
    void aDiagnosisRequestReadsBackItsFields() {
        ByteBuffer b = FetchProtocol.diagnoseRequest(3, 1L << 40, 7, -2L, "CRC32C");
        assertEquals(FetchProtocol.ALGORITHM_OFFSET + 6, b.remaining());
        assertNull(FetchProtocol.validateDiagnose(b));
        assertEquals(3, FetchProtocol.shuffleId(b));
        assertEquals(1L << 40, FetchProtocol.mapId(b));
        assertEquals(7, FetchProtocol.reduceId(b));
        assertEquals(-2L, FetchProtocol.checksum(b));
        assertEquals("CRC32C", FetchProtocol.algorithm(b));
        byte[] answer = FetchProtocol.diagnosis("CHECKSUM_VERIFY_PASS").array();
        assertNull(FetchProtocol.validateDiagnosis(answer));
        assertEquals("CHECKSUM_VERIFY_PASS", FetchProtocol.cause(answer));
    }

    @Test
    void badDiagnosisRequestsAndAnswersAreNamedWithTheirValue() {
        assertEquals("shuffleId=-1 is negative",
            FetchProtocol.validateDiagnose(FetchProtocol.diagnoseRequest(-1, 2, 3, 0, "CRC32")));
        assertEquals("mapId=-2 is negative",
            FetchProtocol.validateDiagnose(FetchProtocol.diagnoseRequest(1, -2, 3, 0, "CRC32")));
        assertEquals("reduceId=-3 is negative",
            FetchProtocol.validateDiagnose(FetchProtocol.diagnoseRequest(1, 2, -3, 0, "CRC32")));
        ByteBuffer v2 = FetchProtocol.diagnoseRequest(1, 2, 3, 0, "CRC32");
        v2.putInt(FetchProtocol.VERSION_OFFSET, 2);
        assertEquals("diagnosis request version=2 expected=1", FetchProtocol.validateDiagnose(v2));
        assertEquals("diagnosis request length=32 out of range [33, 48]",
            FetchProtocol.validateDiagnose(ByteBuffer.allocate(32)));
        ByteBuffer high = FetchProtocol.diagnoseRequest(1, 2, 3, 0, "CRC32");
        high.put(FetchProtocol.ALGORITHM_OFFSET + 4, (byte) 0xC3);
        assertEquals("algorithm name has character=0xc3 at index=4 (only A-Z, 0-9)",
            FetchProtocol.validateDiagnose(high));
        ByteBuffer shortName = FetchProtocol.diagnoseRequest(1, 2, 3, 0, "CRC32");
        shortName.putInt(FetchProtocol.ALGORITHM_LENGTH_OFFSET, 4);
        assertEquals("algorithm length=4 expected=5", FetchProtocol.validateDiagnose(shortName));
        assertThrows(IllegalArgumentException.class, () -> FetchProtocol.diagnoseRequest(1, 2, 3, 0, "a/b"));
        assertThrows(IllegalArgumentException.class, () -> FetchProtocol.diagnoseRequest(1, 2, 3, 0, ""));
        assertThrows(IllegalArgumentException.class,
            () -> FetchProtocol.diagnoseRequest(1, 2, 3, 0, "A".repeat(FetchProtocol.MAX_ALGORITHM + 1)));
        assertEquals("diagnosis answer length=0 out of range [1, 64]", FetchProtocol.validateDiagnosis(new byte[0]));
        assertEquals("cause name has character=0x2d at index=4 (only A-Z, 0-9, _)",
            FetchProtocol.validateDiagnosis("DISK-ISSUE".getBytes(java.nio.charset.StandardCharsets.US_ASCII)));
        assertEquals("diagnosis answer length=65 out of range [1, 64]",
            FetchProtocol.validateDiagnosis(new byte[65]));
    }

    @Test
    void badLocationRequestsAreNamedWithTheirValue() {
        assertNull(FetchProtocol.validateLocate(FetchProtocol.locateRequest(1, 2, "exec-1_read.shm")));
        assertEquals("location request length=20 out of range [21, 84]",
            FetchProtocol.validateLocate(ByteBuffer.allocate(20)));
        assertEquals("location request length=85 out of range [21, 84]",
            FetchProtocol.validateLocate(ByteBuffer.allocate(85)));
        ByteBuffer v2 = FetchProtocol.locateRequest(1, 2, "r");
        v2.putInt(FetchProtocol.VERSION_OFFSET, 2);
        assertEquals("location request version=2 expected=1", FetchProtocol.validateLocate(v2));
        assertEquals("shuffleId=-1 mapId=2: negative",
            FetchProtocol.validateLocate(FetchProtocol.locateRequest(-1, 2, "r")));
        assertEquals("shuffleId=1 mapId=-2: negative",
            FetchProtocol.validateLocate(FetchProtocol.locateRequest(1, -2, "r")));
        // a node-name length that points past the body (a peer's lie) is refused before anything is read by it
        ByteBuffer lie = FetchProtocol.locateRequest(1, 2, "reader");
        lie.putInt(FetchProtocol.NODE_LENGTH_OFFSET, Integer.MAX_VALUE);
        assertEquals("node name length=2147483647 expected=6", FetchProtocol.validateLocate(lie));
        assertEquals("node name=a/b is not letters, digits, -_.",
            FetchProtocol.validateLocate(FetchProtocol.locateRequest(1, 2, "a/b")));
    }

    @Test
    void aLocationAnswerIsCheckedBeforeItsOffsetsAreUsed() {
        io.rdmx.transport.RemoteRegion region = new io.rdmx.transport.RemoteRegion(0, 100, 7);
        byte[] good = FetchProtocol.location(region, new long[] {0, 40, 100}).array();
        assertEquals(3, FetchProtocol.locationOffsets(good).length);
        IllegalArgumentException past = assertThrows(IllegalArgumentException.class,
            () -> FetchProtocol.locationOffsets(FetchProtocol.location(region, new long[] {0, 40, 101}).array()));
        assertTrue(past.getMessage().contains("offset[2]=101"), past.getMessage());
        IllegalArgumentException down = assertThrows(IllegalArgumentException.class,
            () -> FetchProtocol.locationOffsets(FetchProtocol.location(region, new long[] {0, 40, 30}).array()));
        assertTrue(down.getMessage().contains("offset[2]=30"), down.getMessage());
        // a count that does not match the answer's length (a peer claiming a billion offsets) allocates nothing
        byte[] lie = good.clone();
        ByteBuffer.wrap(lie).putInt(0, 1 << 30);
        IllegalArgumentException count = assertThrows(IllegalArgumentException.class,
            () -> FetchProtocol.locationOffsets(lie));
        assertTrue(count.getMessage().contains("offsets=1073741824"), count.getMessage());
    }
}
