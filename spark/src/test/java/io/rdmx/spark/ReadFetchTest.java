package io.rdmx.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.internal.LeakDetector;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Block fetch by one-sided READ between two executors' endpoints in one JVM, over shm (same host) and tcp (another
 * host): the reader READs the blocks out of the serving executor's map output file, whose block server answers no
 * fetch; a map output whose shuffle was unregistered fails its READ cleanly (no hang, no bytes); regions are
 * released (no leak reported at close).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReadFetchTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    /** Map outputs as Spark's sort shuffle writes them: one data file per map task, and its block offsets. */
    static final class FileSource implements BlockSource {
        final Map<String, MapOutputFile> files = new HashMap<>();
        final Path dir;

        FileSource(Path dir) {
            this.dir = dir;
        }

        /** Writes a map output of these block sizes; returns its blocks' bytes. */
        byte[][] put(int shuffle, long map, int... sizes) throws IOException {
            byte[][] blocks = new byte[sizes.length][];
            long[] offsets = new long[sizes.length + 1];
            Path data = dir.resolve("shuffle_" + shuffle + "_" + map + "_0.data");
            try (FileChannel ch = FileChannel.open(data, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
                for (int r = 0; r < sizes.length; r++) {
                    blocks[r] = new byte[sizes[r]];
                    new Random(map * 31 + r).nextBytes(blocks[r]);
                    ch.write(ByteBuffer.wrap(blocks[r]));
                    offsets[r + 1] = offsets[r] + sizes[r];
                }
            }
            files.put(shuffle + "_" + map, new MapOutputFile(data, offsets));
            return blocks;
        }

        private MapOutputFile file(int shuffleId, long mapId) throws IOException {
            MapOutputFile f = files.get(shuffleId + "_" + mapId);
            if (f == null) {
                throw new IOException("no map output shuffle_" + shuffleId + "_" + mapId);
            }
            return f;
        }

        @Override
        public long size(int shuffleId, long mapId, int reduceId) throws IOException {
            long[] o = file(shuffleId, mapId).offsets();
            return o[reduceId + 1] - o[reduceId];
        }

        @Override
        public void read(int shuffleId, long mapId, int reduceId, long offset, ByteBuffer dst) throws IOException {
            MapOutputFile f = file(shuffleId, mapId);
            try (FileChannel ch = FileChannel.open(f.data(), StandardOpenOption.READ)) {
                long pos = f.offsets()[reduceId] + offset;
                while (dst.hasRemaining()) {
                    pos += ch.read(dst, pos);
                }
            }
        }

        @Override
        public MapOutputFile mapOutput(int shuffleId, long mapId) throws IOException {
            return file(shuffleId, mapId);
        }
    }

    private static byte[] fetch(RdmxEndpoints client, FetchBlock b) throws Exception {
        try (BlockFetcher f = new BlockFetcher(client::call, client::release, List.of(b), 1 << 20, 16,
            client.fetchChunkBytes(), TIMEOUT)) {
            FetchedBlock got = f.next();
            byte[] bytes = got.stream().readAllBytes();
            f.release(got);
            return bytes;
        }
    }

    private static byte[] concat(byte[]... parts) {
        int n = Arrays.stream(parts).mapToInt(p -> p.length).sum();
        ByteBuffer b = ByteBuffer.allocate(n);
        for (byte[] p : parts) {
            b.put(p);
        }
        return b.array();
    }

    @Test
    void blocksAreReadOutOfTheServingExecutorsFileAndItsServerAnswersNoFetch(@TempDir Path dir) throws Exception {
        long leaks = LeakDetector.leakCount();
        FileSource source = new FileSource(dir);
        byte[][] blocks = source.put(1, 2, 10_000, 3, 0, 5_000, 7_777);
        RdmxShuffleConf conf = RdmxShuffleConf.from(Map.of(RdmxShuffleConf.CHUNK_BYTES_KEY, "4096",
            RdmxShuffleConf.PEER_TIMEOUT_KEY, "5000")::get);
        try (RdmxEndpoints a = RdmxEndpoints.start(conf, "127.0.0.1", source);
             RdmxEndpoints b = RdmxEndpoints.start(conf, "127.0.0.1", new FileSource(dir))) {
            assertTrue(a.advertisement().contains("\nread-shm=") && a.advertisement().contains("\nread-tcp="),
                a.advertisement());
            for (String host : List.of("127.0.0.1", "other-host")) {
                String target = b.choose(host, "a", a.advertisement());
                assertArrayEquals(blocks[0], fetch(b, new FetchBlock("a", target, 1, 2, 0, 0, 100)),
                    target + ": a block of 3 chunks whose estimate is 1");
                assertArrayEquals(blocks[1], fetch(b, new FetchBlock("a", target, 1, 2, 0, 1, 3)), target);
                assertArrayEquals(concat(blocks[1], blocks[2], blocks[3], blocks[4]), fetch(b,
                    new FetchBlock("a", target, 1, 2, 0, 1, 5, 12_780)), target + ": a range in one");
            }
            assertEquals(0, b.rpcFetches(), "every block by READ");
            assertTrue(b.readFetches() >= 2 * (3 + 1 + 4), "READs: " + b.readFetches());
            assertEquals(0, a.bytesServed(), "the serving executor's block server answered no fetch");
            assertEquals(2, a.granted(), "one region per provider's READ node");
            assertTrue(b.buffers().allocated() == 0, "READ answers land in the READ buffers");

            // the shuffle is unregistered: its regions go; a READ of it (the location still cached) fails cleanly
            a.unregisterShuffle(1);
            assertEquals(0, a.granted());
            String target = b.choose("127.0.0.1", "a", a.advertisement());
            BlockFetchException e = assertThrows(BlockFetchException.class,
                () -> fetch(b, new FetchBlock("a", target, 1, 2, 0, 0, 10_000)));
            assertTrue(e.getMessage().contains("READ of shuffle_1_2_0") && e.getMessage().contains("from executor a"),
                e.getMessage());
            assertFalse(e.getMessage().contains("no block arrived"), "failed by itself, not by the bound: "
                + e.getMessage());
        }
        assertEquals(leaks, LeakDetector.leakCount(), "regions leaked at close");
    }

    /**
     * A serving executor that stops (its READ node closes, its regions released) after a reader located its map
     * output: the next READ fails by itself, naming the block and the peer, not by the bound.
     */
    @Test
    void aReadFromAStoppedExecutorFailsTheFetch(@TempDir Path dir) throws Exception {
        long leaks = LeakDetector.leakCount();
        FileSource source = new FileSource(dir);
        byte[][] blocks = source.put(1, 2, 10_000, 5_000);
        RdmxShuffleConf conf = RdmxShuffleConf.from(Map.of(RdmxShuffleConf.CHUNK_BYTES_KEY, "4096",
            RdmxShuffleConf.PEER_TIMEOUT_KEY, "5000")::get);
        try (RdmxEndpoints b = RdmxEndpoints.start(conf, "127.0.0.1", new FileSource(dir))) {
            String target;
            try (RdmxEndpoints a = RdmxEndpoints.start(conf, "127.0.0.1", source)) {
                target = b.choose("127.0.0.1", "a", a.advertisement());
                assertArrayEquals(blocks[0], fetch(b, new FetchBlock("a", target, 1, 2, 0, 0, 10_000)));
                assertTrue(b.readFetches() > 0);
            }
            BlockFetchException e = assertThrows(BlockFetchException.class,
                () -> fetch(b, new FetchBlock("a", target, 1, 2, 0, 1, 5_000)));
            assertTrue(e.getMessage().contains("shuffle_1_2_1") && e.getMessage().contains("from executor a"),
                e.getMessage());
            assertFalse(e.getMessage().contains("no block arrived"), "failed by itself: " + e.getMessage());
        }
        assertEquals(leaks, LeakDetector.leakCount(), "regions leaked at close");
    }

    /** With spark.rdmx.fetch=rpc every block is fetched from the block server, none by READ. */
    @Test
    void fetchRpcForcesTheBlockServer(@TempDir Path dir) throws Exception {
        FileSource source = new FileSource(dir);
        byte[][] blocks = source.put(1, 2, 10_000);
        RdmxShuffleConf conf = RdmxShuffleConf.from(Map.of(RdmxShuffleConf.CHUNK_BYTES_KEY, "4096",
            RdmxShuffleConf.FETCH_KEY, "rpc")::get);
        try (RdmxEndpoints a = RdmxEndpoints.start(conf, "127.0.0.1", source);
             RdmxEndpoints b = RdmxEndpoints.start(conf, "127.0.0.1", new FileSource(dir))) {
            String target = b.choose("127.0.0.1", "a", a.advertisement());
            assertArrayEquals(blocks[0], fetch(b, new FetchBlock("a", target, 1, 2, 0, 0, 10_000)));
            assertEquals(0, b.readFetches());
            assertEquals(3, b.rpcFetches());
            assertEquals(blocks[0].length, a.bytesServed());
        }
    }
}
