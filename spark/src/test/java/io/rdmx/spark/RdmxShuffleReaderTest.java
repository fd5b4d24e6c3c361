package io.rdmx.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import org.apache.spark.network.shuffle.checksum.Cause;
import org.apache.spark.network.shuffle.checksum.ShuffleChecksumHelper;
import org.junit.jupiter.api.Test;
import scala.collection.AbstractIterator;

/**
 * How the reader takes a block it cannot decode. Spark's deserialization streams decode in {@code hasNext} and
 * throw {@link IOException} undeclared (Scala): such a failure, from {@code hasNext} as from {@code next}, must
 * reach the reader's handler (which raises Spark's FetchFailedException, so Spark recomputes the map output)
 * rather than fail the task as a plain error that every retry meets again.
 */
class RdmxShuffleReaderTest {
    /** A corrupt stream: fails in hasNext, as a Kryo or Java deserialization stream over bad bytes does. */
    private static final class Corrupt extends AbstractIterator<Object> {
        private final boolean inNext;

        Corrupt(boolean inNext) {
            this.inNext = inNext;
        }

        @Override
        public boolean hasNext() {
            if (!inNext) {
                throw sneaky(new IOException("Stream is corrupted"));
            }
            return true;
        }

        @Override
        public Object next() {
            throw sneaky(new IOException("Stream is corrupted"));
        }
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> RuntimeException sneaky(Throwable t) throws T {
        throw (T) t;
    }

    private static final class Failed extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Failed(Exception cause) {
            super(cause);
        }
    }

    @Test
    void aBlockThatFailsToDecodeInHasNextReachesTheHandler() {
        Failed f = assertThrows(Failed.class, () -> RdmxShuffleReader.guardedHasNext(new Corrupt(false), Failed::new));
        assertTrue(f.getCause() instanceof IOException, String.valueOf(f.getCause()));
        assertTrue(RdmxShuffleReader.isCorruption(f.getCause()));
    }

    @Test
    void aBlockThatFailsToDecodeInNextReachesTheHandler() {
        Corrupt c = new Corrupt(true);
        assertTrue(RdmxShuffleReader.guardedHasNext(c, Failed::new));
        Failed f = assertThrows(Failed.class, () -> RdmxShuffleReader.guardedNext(c, Failed::new));
        assertTrue(f.getCause() instanceof IOException, String.valueOf(f.getCause()));
    }

    @Test
    void readableRecordsPassUntouched() {
        scala.collection.Iterator<Integer> it = scala.jdk.javaapi.CollectionConverters.asScala(
            java.util.List.of(1, 2).iterator());
        assertTrue(RdmxShuffleReader.guardedHasNext(it, Failed::new));
        assertEquals(1, RdmxShuffleReader.guardedNext(it, Failed::new));
        assertEquals(2, RdmxShuffleReader.guardedNext(it, Failed::new));
        assertFalse(RdmxShuffleReader.guardedHasNext(it, Failed::new));
    }

    @Test
    void onlyBadBytesCountAsCorruption() {
        assertTrue(RdmxShuffleReader.isCorruption(new IOException("truncated")));
        assertTrue(RdmxShuffleReader.isCorruption(new RuntimeException(new IOException("wrapped"))));
        assertFalse(RdmxShuffleReader.isCorruption(new ArithmeticException("the job's own bug")));
        RuntimeException own = new UnsupportedOperationException("x");
        assertSame(own, assertThrows(UnsupportedOperationException.class,
            () -> RdmxShuffleReader.guardedNext(new AbstractIterator<Object>() {
                @Override
                public boolean hasNext() {
                    return true;
                }

                @Override
                public Object next() {
                    throw own;
                }
            }, e -> (RuntimeException) e)));
    }

    /**
     * The claim limit follows what Spark's map statuses say: exact-or-high estimates up to 2000 partitions (the
     * estimate times the margin), averages above (any size under spark.shuffle.accurateBlockThreshold).
     */
    @Test
    void theSizeLimitFollowsHowSparkCompressedTheMapStatuses() {
        org.apache.spark.SparkConf conf = new org.apache.spark.SparkConf(false);
        assertEquals(new BlockSizeLimit(0, 1L << 30), RdmxShuffleReader.sizeLimit(conf, 2000, 1L << 30));
        assertEquals(new BlockSizeLimit(100L << 20, 1L << 30), RdmxShuffleReader.sizeLimit(conf, 2001,
            1L << 30));
        conf.set("spark.shuffle.minNumPartitionsToHighlyCompress", "10").set("spark.shuffle.accurateBlockThreshold",
            "5m");
        assertEquals(new BlockSizeLimit(5L << 20, 1L << 30), RdmxShuffleReader.sizeLimit(conf, 11, 1L << 30));
        assertEquals(new BlockSizeLimit(0, 1L << 30), RdmxShuffleReader.sizeLimit(conf, 10, 1L << 30));
    }

    @Test
    void aDiagnosedCorruptBlockFailsInSparksWords() {
        assertEquals("Block shuffle_0_1_0 is corrupted due to DISK_ISSUE",
            RdmxShuffleReader.diagnosisMessage("shuffle_0_1_0", Cause.DISK_ISSUE, "ADLER32"));
        assertEquals("Block shuffle_0_1_0 is corrupted due to NETWORK_ISSUE",
            RdmxShuffleReader.diagnosisMessage("shuffle_0_1_0", Cause.NETWORK_ISSUE, "ADLER32"));
        assertEquals("Block shuffle_0_1_0 is corrupted but checksum verification passed",
            RdmxShuffleReader.diagnosisMessage("shuffle_0_1_0", Cause.CHECKSUM_VERIFY_PASS, "ADLER32"));
        assertEquals("Block shuffle_0_1_0 is corrupted but the cause is unknown",
            RdmxShuffleReader.diagnosisMessage("shuffle_0_1_0", Cause.UNKNOWN_ISSUE, "ADLER32"));
        assertEquals("Block shuffle_0_1_0 is corrupted but corruption diagnosis failed due to unsupported checksum "
            + "algorithm: MD5", RdmxShuffleReader.diagnosisMessage("shuffle_0_1_0",
                Cause.UNSUPPORTED_CHECKSUM_ALGORITHM, "MD5"));
    }

    @Test
    void aFetchedBlocksChecksumIsSparksChecksumOfItsBytesInOrder() {
        byte[] all = new byte[10_000];
        new java.util.Random(5).nextBytes(all);
        java.util.List<java.nio.ByteBuffer> chunks = java.util.List.of(java.nio.ByteBuffer.wrap(all, 0, 4096).slice(),
            java.nio.ByteBuffer.allocateDirect(5904).put(all, 4096, 5904).flip());
        for (String algorithm : java.util.List.of("ADLER32", "CRC32", "CRC32C")) {
            java.util.zip.Checksum c = ShuffleChecksumHelper.getChecksumByAlgorithm(algorithm);
            c.update(all, 0, all.length);
            assertEquals(c.getValue(), RdmxShuffleReader.checksumOf(chunks, algorithm), algorithm);
            assertEquals(c.getValue(), RdmxShuffleReader.checksumOf(chunks, algorithm), "positions unchanged");
        }
        assertThrows(UnsupportedOperationException.class, () -> RdmxShuffleReader.checksumOf(chunks, "MD5"));
    }

    @Test
    void checksumsAreOnWithSparksDefaultAlgorithmAndOffWhenDisabled() {
        org.apache.spark.SparkConf conf = new org.apache.spark.SparkConf(false);
        assertEquals("ADLER32", RdmxShuffleReader.checksumAlgorithm(conf));
        conf.set("spark.shuffle.checksum.algorithm", "CRC32C");
        assertEquals("CRC32C", RdmxShuffleReader.checksumAlgorithm(conf));
        conf.set("spark.shuffle.checksum.enabled", "false");
        assertEquals(null, RdmxShuffleReader.checksumAlgorithm(conf));
    }

    /**
     * Spark's merge of contiguous blocks (fetchShuffleBlocksInBatch): each run of one map output's blocks becomes
     * one range from its first partition to past its last, its size their sum; another map output starts a new one.
     */
    @Test
    void contiguousBlocksOfOneMapOutputMergeIntoOneRange() {
        java.util.List<FetchBlock> blocks = java.util.List.of(
            new FetchBlock("e", "a", 0, 5, 0, 2, 10), new FetchBlock("e", "a", 0, 5, 0, 3, 20),
            new FetchBlock("e", "a", 0, 5, 0, 5, 30), new FetchBlock("e", "a", 0, 6, 1, 2, 40),
            new FetchBlock("e", "a", 0, 7, 2, 4, 50));
        assertEquals(java.util.List.of(new FetchBlock("e", "a", 0, 5, 0, 2, 6, 60),
            new FetchBlock("e", "a", 0, 6, 1, 2, 3, 40), new FetchBlock("e", "a", 0, 7, 2, 4, 5, 50)),
            RdmxShuffleReader.mergeContiguous(blocks));
        assertEquals("shuffle_0_5_2_6", RdmxShuffleReader.blockId(
            RdmxShuffleReader.mergeContiguous(blocks).get(0)).name());
        assertEquals("shuffle_0_6_2", RdmxShuffleReader.blockId(
            RdmxShuffleReader.mergeContiguous(blocks).get(1)).name());
    }
}
