package io.rdmx.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.spark.SparkConf;
import org.apache.spark.rpc.RpcAddress;
import org.apache.spark.serializer.JavaSerializer;
import org.apache.spark.serializer.KryoSerializer;
import org.apache.spark.serializer.Serializer;
import org.apache.spark.serializer.SerializerInstance;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import scala.Tuple2;

/** The pieces of the pipelined manager that need no Spark cluster. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class PipePiecesTest {
    @Test
    void aFrameHeaderReadsBackAndAShortOrUnknownRecordIsRefused() {
        ByteBuffer b = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
        PipeFrames.header(b, 8, PipeFrames.DATA, 7, 3);
        assertEquals(PipeFrames.DATA, PipeFrames.kind(b, 8, PipeFrames.HEADER + 5));
        assertEquals(7, PipeFrames.mapIndex(b, 8));
        assertEquals(3, PipeFrames.partition(b, 8));
        assertThrows(IllegalArgumentException.class, () -> PipeFrames.kind(b, 8, PipeFrames.HEADER - 1));
        b.putInt(8, 9);
        assertThrows(IllegalArgumentException.class, () -> PipeFrames.kind(b, 8, PipeFrames.HEADER));
    }

    @Test
    void aReaderIsDoneOnlyWhenEveryMapEndedForEveryPartition() {
        PipeProgress p = new PipeProgress(0, 2, 4, 6);
        p.start(0, 4, "a");
        p.start(0, 5, "a");
        p.start(1, 4, "b");
        p.data(0, 4);
        p.end(0, 4);
        p.end(0, 5);
        assertFalse(p.done());
        p.end(1, 4);
        assertFalse(p.done(), "map 1 has not ended for partition 5");
        p.start(1, 5, "b");
        p.end(1, 5);
        assertTrue(p.done());
    }

    @Test
    void outOfOrderOrOutOfRangeFramesAreRefused() {
        PipeProgress p = new PipeProgress(0, 2, 0, 1);
        assertThrows(IllegalStateException.class, () -> p.end(0, 0), "END before START");
        assertThrows(IllegalStateException.class, () -> p.data(0, 0), "DATA before START");
        assertThrows(IllegalStateException.class, () -> p.start(2, 0, "a"), "map out of range");
        assertThrows(IllegalStateException.class, () -> p.start(0, 1, "a"), "partition out of range");
        p.start(0, 0, "a");
        p.end(0, 0);
        assertThrows(IllegalStateException.class, () -> p.end(0, 0), "second END");
        assertThrows(IllegalStateException.class, () -> p.data(0, 0), "DATA after END");
    }

    @Test
    void aLostPeerMattersOnlyWhileItCarriesAMapThatHasNotEnded() {
        PipeProgress p = new PipeProgress(0, 2, 0, 1);
        p.start(0, 0, "a");
        p.start(1, 0, "b");
        p.end(0, 0);
        assertNull(p.lost("a"), "a's only map ended");
        assertNull(p.lost("c"), "c carried nothing");
        assertEquals("map 1", p.lost("b"));
    }

    @Test
    void aTaskKeepsItsSlotUntilReleasedAndAFullPoolTimesOutNamingTheKey() throws Exception {
        PipeSlots s = new PipeSlots(2);
        int a = s.lease(10, 1000);
        assertEquals(a, s.lease(10, 1000), "the same task asks again");
        int b = s.lease(11, 1000);
        assertTrue(a != b);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> s.lease(12, 1));
        assertTrue(e.getMessage().contains(PipeConf.SLOTS_KEY), e::getMessage);
        s.release(10);
        assertEquals(a, s.lease(12, 1000));
        assertEquals(2, s.held());
    }

    @Test
    void settingsAreValidatedNamingTheKeyAndValue() {
        Map<String, String> m = new HashMap<>();
        PipeConf d = PipeConf.from(m::get);
        assertEquals(RdmxEndpoints.AUTO, d.provider());
        assertEquals(4, d.slots());
        m.put("spark.executor.cores", "8");
        assertEquals(8, PipeConf.from(m::get).slots());
        m.put(PipeConf.RING_BYTES_KEY, "5000");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PipeConf.from(m::get));
        assertTrue(e.getMessage().contains(PipeConf.RING_BYTES_KEY + "=5000"), e::getMessage);
        m.remove(PipeConf.RING_BYTES_KEY);
        m.put(PipeConf.PROVIDER_KEY, "no such/provider");
        e = assertThrows(IllegalArgumentException.class, () -> PipeConf.from(m::get));
        assertTrue(e.getMessage().contains(PipeConf.PROVIDER_KEY + "=no such/provider"), e::getMessage);
        m.put(PipeConf.PROVIDER_KEY, "shm");
        m.put(PipeConf.SLOTS_KEY, "0");
        e = assertThrows(IllegalArgumentException.class, () -> PipeConf.from(m::get));
        assertTrue(e.getMessage().contains(PipeConf.SLOTS_KEY + "=0"), e::getMessage);
    }

    /** Executors exec-1 on host-a and exec-2 on host-b; a sender is on a host when its host name is the same. */
    private static PipeDirectory.Table table() {
        Map<String, String> live = Map.of("exec-1", "host-a", "exec-2", "host-b");
        return new PipeDirectory.Table(live::get, String::equals, new RpcAddress("driver-host", 7077));
    }

    private static final RpcAddress A = new RpcAddress("host-a", 4001);
    private static final RpcAddress B = new RpcAddress("host-b", 4002);

    @Test
    void theDirectoryAnswersOnlyOnceEveryPartitionHasAReaderWithAFreshSession() {
        PipeDirectory.Table t = table();
        String s0 = t.handle("PR\n5\n0\nexec-1\ntcp-a:1\n2", A);
        assertEquals("", t.handle("PL\n5\n2", B), "partition 1 has no reader yet");
        String s1 = t.handle("PR\n5\n1\nexec-2\ntcp-b:2\n0", B);
        PipeDirectory.Reader[] r = PipeDirectory.Table.parse(t.handle("PL\n5\n2", A), 2);
        assertArrayEquals(new PipeDirectory.Reader[] {new PipeDirectory.Reader("tcp-a:1", 2, Integer.parseInt(s0)),
            new PipeDirectory.Reader("tcp-b:2", 0, Integer.parseInt(s1))}, r);
        String again = t.handle("PR\n5\n1\nexec-2\ntcp-b:2\n1", B);
        assertTrue(!again.equals(s1), "a new reader of a partition gets a new session");
        assertEquals(Integer.parseInt(again), t.lookup(5, 2)[1].session());
        t.forget(5);
        assertEquals(0, t.registered(5));
        assertThrows(IllegalArgumentException.class, () -> t.handle("PX\n1", A));
    }

    @Test
    void aRegistrationIsAcceptedOnlyFromTheExecutorItNames() {
        PipeDirectory.Table t = table();
        SecurityException e = assertThrows(SecurityException.class,
            () -> t.handle("PR\n1\n0\nexec-2\nevil:1\n0", A), "exec-2's reader registered from exec-1's host");
        assertTrue(e.getMessage().contains("executor exec-2") && e.getMessage().contains("host=host-b")
            && e.getMessage().contains(A.toString()), e::getMessage);
        e = assertThrows(SecurityException.class, () -> t.handle("PR\n1\n0\nexec-9\nx:1\n0", A));
        assertTrue(e.getMessage().contains("no live executor"), e::getMessage);
        assertEquals(0, t.registered(1), "nothing refused was registered");
        t.handle("PR\n1\n0\nexec-1\ntcp-a:1\n0", A);
        RpcAddress otherPort = new RpcAddress("host-a", 4999);
        e = assertThrows(SecurityException.class, () -> t.handle("PR\n1\n1\nexec-1\ntcp-a:1\n0", otherPort),
            "another process on exec-1's host after exec-1 registered");
        assertTrue(e.getMessage().contains("registered from " + A), e::getMessage);
        t.handle("PR\n1\n1\nexec-2\nshm-b\n0", new RpcAddress("driver-host", 7077));
        assertEquals(2, t.registered(1), "the driver's own tasks (local mode) register from its address");
    }

    @Test
    void eachRecordIsSerializedToBeReadByItselfWithOneStreamWhenTheSerializerAllows() throws Exception {
        for (Serializer ser : new Serializer[] {new KryoSerializer(new SparkConf()),
            new JavaSerializer(new SparkConf())}) {
            RdmxPipelinedShuffleWriter.Bytes bytes = new RdmxPipelinedShuffleWriter.Bytes();
            RdmxPipelinedShuffleWriter.Records out = new RdmxPipelinedShuffleWriter.Records(ser, bytes);
            SerializerInstance in = ser.newInstance();
            for (int i = 0; i < 3; i++) {
                int n = out.serialize(new Tuple2<>("key" + i, (long) i));
                scala.collection.Iterator<Tuple2<Object, Object>> it = in.deserializeStream(
                    new java.io.ByteArrayInputStream(bytes.array(), 0, n)).asKeyValueIterator();
                assertEquals(new Tuple2<>("key" + i, (long) i), it.next(), ser.getClass().getSimpleName());
                assertFalse(it.hasNext(), ser.getClass().getSimpleName() + ": one record per piece");
            }
            out.close();
        }
    }
}
