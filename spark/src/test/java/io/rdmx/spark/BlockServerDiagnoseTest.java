package io.rdmx.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.channel.ChannelConfig;
import io.rdmx.channel.ChannelEngine;
import io.rdmx.rpc.RemoteRpcException;
import io.rdmx.rpc.RpcClient;
import io.rdmx.rpc.RpcConfig;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.loopback.LoopbackFabric;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A block server's corruption diagnosis ({@link FetchProtocol#METHOD_DIAGNOSE}) over a real RPC client. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BlockServerDiagnoseTest {
    private static final int CHUNK = 8192;
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    /** Diagnoses every block as {@link #cause}, recording what it was asked. */
    static final class DiagnosingSource implements BlockSource {
        final List<String> asked = new CopyOnWriteArrayList<>();
        volatile String cause = "DISK_ISSUE";

        @Override
        public long size(int shuffleId, long mapId, int reduceId) {
            return 1;
        }

        @Override
        public void read(int shuffleId, long mapId, int reduceId, long offset, ByteBuffer dst) {
            dst.put((byte) 7);
        }

        @Override
        public String diagnose(int shuffleId, long mapId, int reduceId, long checksum, String algorithm) {
            asked.add(FetchProtocol.blockName(shuffleId, mapId, reduceId) + " " + checksum + " " + algorithm);
            return cause;
        }
    }

    private final Deque<AutoCloseable> closing = new ArrayDeque<>();
    private RpcClient client;

    private String serve(BlockSource source) throws Exception {
        LoopbackFabric fabric = new LoopbackFabric();
        Node sn = fabric.open(NodeOptions.builder().name("diag-s").build());
        closing.push(sn);
        ChannelEngine se = ChannelEngine.open(sn, ChannelConfig.builder(1).ringCapacity(1 << 16).build());
        closing.push(se);
        BlockServer server = BlockServer.start(se, source, CHUNK, 2);
        closing.push(server);
        Node cn = fabric.open(NodeOptions.builder().name("diag-c").build());
        closing.push(cn);
        ChannelEngine ce = ChannelEngine.open(cn, ChannelConfig.builder(1).ringCapacity(1 << 16).build());
        closing.push(ce);
        client = RpcClient.open(ce, RpcConfig.builder().maxMessageBytes(CHUNK + FetchProtocol.ANSWER_HEADER).build());
        closing.push(client);
        return server.address();
    }

    @BeforeEach
    @AfterEach
    void stop() throws Exception {
        while (!closing.isEmpty()) {
            closing.pop().close();
        }
    }

    @Test
    void aDiagnosisRequestReachesTheSourceAndItsCauseComesBack() throws Exception {
        DiagnosingSource source = new DiagnosingSource();
        String at = serve(source);
        byte[] answer = client.call(at, FetchProtocol.METHOD_DIAGNOSE,
            FetchProtocol.diagnoseRequest(3, 1L << 40, 7, 0xFFFF_FFFFL, "CRC32C"), TIMEOUT);
        assertNull(FetchProtocol.validateDiagnosis(answer));
        assertEquals("DISK_ISSUE", FetchProtocol.cause(answer));
        assertEquals(List.of("shuffle_3_1099511627776_7 4294967295 CRC32C"), source.asked);
        source.cause = "NETWORK_ISSUE";
        answer = client.call(at, FetchProtocol.METHOD_DIAGNOSE,
            FetchProtocol.diagnoseRequest(0, 1, 0, 5, "ADLER32"), TIMEOUT);
        assertEquals("NETWORK_ISSUE", FetchProtocol.cause(answer));
    }

    @Test
    void aMalformedDiagnosisRequestIsRefusedNamingItsFieldAndTheServerGoesOn() throws Exception {
        DiagnosingSource source = new DiagnosingSource();
        String at = serve(source);
        // an algorithm name that would walk out of the block manager's directories (it names a file there)
        ByteBuffer traversal = FetchProtocol.diagnoseRequest(0, 1, 0, 5, "ADLER32");
        traversal.put(FetchProtocol.ALGORITHM_OFFSET, "../../x".getBytes(StandardCharsets.US_ASCII));
        RemoteRpcException e = assertThrows(RemoteRpcException.class,
            () -> client.call(at, FetchProtocol.METHOD_DIAGNOSE, traversal, TIMEOUT));
        assertTrue(e.getMessage().contains("bad diagnosis request"), e.getMessage());
        assertTrue(e.getMessage().contains("algorithm name has character=0x2e at index=0"), e.getMessage());
        ByteBuffer lying = FetchProtocol.diagnoseRequest(0, 1, 0, 5, "CRC32");
        lying.putInt(FetchProtocol.ALGORITHM_LENGTH_OFFSET, 1 << 20);
        e = assertThrows(RemoteRpcException.class,
            () -> client.call(at, FetchProtocol.METHOD_DIAGNOSE, lying, TIMEOUT));
        assertTrue(e.getMessage().contains("algorithm length=1048576 expected=5"), e.getMessage());
        e = assertThrows(RemoteRpcException.class,
            () -> client.call(at, FetchProtocol.METHOD_DIAGNOSE, ByteBuffer.allocate(4096), TIMEOUT));
        assertTrue(e.getMessage().contains("diagnosis request length=4096 out of range [33, 48]"), e.getMessage());
        assertEquals(List.of(), source.asked);
        // still serving
        assertEquals("DISK_ISSUE", FetchProtocol.cause(client.call(at, FetchProtocol.METHOD_DIAGNOSE,
            FetchProtocol.diagnoseRequest(0, 1, 0, 5, "CRC32"), TIMEOUT)));
    }

    @Test
    void aSourceWithoutDiagnosisAnswersAnError() throws Exception {
        String at = serve(new BlockSource() {
            @Override
            public long size(int shuffleId, long mapId, int reduceId) throws IOException {
                throw new IOException("none");
            }

            @Override
            public void read(int shuffleId, long mapId, int reduceId, long offset, ByteBuffer dst)
                throws IOException {
                throw new IOException("none");
            }
        });
        RemoteRpcException e = assertThrows(RemoteRpcException.class, () -> client.call(at,
            FetchProtocol.METHOD_DIAGNOSE, FetchProtocol.diagnoseRequest(0, 1, 0, 5, "CRC32"), TIMEOUT));
        assertTrue(e.getMessage().contains("no corruption diagnosis here"), e.getMessage());
    }
}
