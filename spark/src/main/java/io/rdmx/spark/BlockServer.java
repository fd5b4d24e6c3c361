package io.rdmx.spark;

import io.rdmx.channel.ChannelEngine;
import io.rdmx.rpc.RpcConfig;
import io.rdmx.rpc.RpcServer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves map output blocks of one executor over one channel engine: answers each {@link FetchProtocol} request
 * with the bytes its {@link BlockSource} reads, and each corruption diagnosis request with the source's diagnosis
 * ({@link BlockSource#diagnose}). A request that is malformed or names a block the source cannot
 * read is answered with an error naming the block and the reason; the server goes on serving.
 */
public final class BlockServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(BlockServer.class);
    /** The smallest answer buffer a handler thread keeps (it grows, in powers of two, to the largest answer). */
    private static final int MIN_ANSWER_BUFFER = 64 << 10;

    private final RpcServer server;
    /**
     * Each handler thread's answer buffer, reused for every answer it sends (the RPC server has sent an answer
     * before its thread returns: {@link io.rdmx.rpc.RpcHandler#handle}). Direct, so a block is read from its file
     * straight into it, without the JDK's copy through a temporary direct buffer; and no heap array of the
     * answer's size per request (a block of half a region or more is a humongous object for G1). At most
     * chunk bytes + header per handler thread, freed with the thread.
     */
    private final ThreadLocal<ByteBuffer> answers = new ThreadLocal<>();
    private final int maxAnswer;
    private final AtomicLong bytesServed = new AtomicLong();
    private final AtomicLong requestsServed = new AtomicLong();
    private final AtomicLong diagnoses = new AtomicLong();

    private final AtomicLong locations = new AtomicLong();

    private BlockServer(ChannelEngine engine, BlockSource source, int chunkBytes, int threads,
                        MapOutputGrants grants) {
        this.maxAnswer = chunkBytes + FetchProtocol.ANSWER_HEADER;
        RpcConfig rpc = RpcConfig.builder().handlerThreads(threads)
            .maxMessageBytes(chunkBytes + FetchProtocol.ANSWER_HEADER).build();
        this.server = RpcServer.builder(engine).config(rpc)
            .handle(FetchProtocol.METHOD_FETCH, call -> fetch(call, source, chunkBytes))
            .handle(FetchProtocol.METHOD_FETCH_BATCH, call -> fetch(call, source, chunkBytes))
            .handle(FetchProtocol.METHOD_LOCATE, call -> {
                ByteBuffer req = call.request();
                String bad = FetchProtocol.validateLocate(req);
                if (bad != null) {
                    throw new IllegalArgumentException("bad location request from " + call.peer() + ": " + bad);
                }
                if (grants == null) {
                    throw new IOException("no READ here: fetch blocks by RPC");
                }
                ByteBuffer answer = grants.locate(req, call.peer());
                locations.incrementAndGet();
                return answer;
            })
            .handle(FetchProtocol.METHOD_DIAGNOSE, call -> {
                ByteBuffer req = call.request();
                String bad = FetchProtocol.validateDiagnose(req);
                if (bad != null) {
                    throw new IllegalArgumentException("bad diagnosis request from " + call.peer() + ": " + bad);
                }
                String cause = source.diagnose(FetchProtocol.shuffleId(req), FetchProtocol.mapId(req),
                    FetchProtocol.reduceId(req), FetchProtocol.checksum(req), FetchProtocol.algorithm(req));
                diagnoses.incrementAndGet();
                LOG.info("rdmx shuffle: corrupt block {} of {} diagnosed: {}", FetchProtocol.blockName(
                    FetchProtocol.shuffleId(req), FetchProtocol.mapId(req), FetchProtocol.reduceId(req)),
                    call.peer(), cause);
                return FetchProtocol.diagnosis(cause);
            })
            .fallback(call -> {
                throw new IllegalArgumentException("no block method " + call.method() + " (from " + call.peer()
                    + ")");
            })
            .build();
    }

    /** Answers a fetch of a block or of a range of contiguous blocks ({@link FetchProtocol}). */
    private ByteBuffer fetch(io.rdmx.rpc.RpcCall call, BlockSource source, int chunkBytes) throws IOException {
        ByteBuffer req = call.request();
        int method = call.method();
        String bad = FetchProtocol.validate(method, req, chunkBytes);
        if (bad != null) {
            throw new IllegalArgumentException("bad fetch request from " + call.peer() + ": " + bad);
        }
        int shuffleId = FetchProtocol.shuffleId(req);
        long mapId = FetchProtocol.mapId(req);
        int reduceId = FetchProtocol.reduceId(req);
        int end = FetchProtocol.endReduceId(method, req);
        long offset = FetchProtocol.offset(req);
        long size = source.size(shuffleId, mapId, reduceId, end);
        // at or past the end (the reader asked for every chunk its estimate covers): the size alone
        int n = (int) Math.max(0, Math.min(FetchProtocol.length(req), size - offset));
        ByteBuffer answer = answerBuffer(FetchProtocol.ANSWER_HEADER + n);
        answer.putLong(size);
        if (n > 0) {
            source.read(shuffleId, mapId, reduceId, end, offset, answer);
        }
        bytesServed.addAndGet(n);
        requestsServed.incrementAndGet();
        return answer.flip();
    }

    /**
     * @param length the answer's length (at most chunk bytes + header)
     * @return this thread's answer buffer, cleared, its limit at {@code length}
     */
    private ByteBuffer answerBuffer(int length) {
        ByteBuffer b = answers.get();
        if (b == null || b.capacity() < length) {
            int cap = Math.min(maxAnswer, Math.max(MIN_ANSWER_BUFFER, Integer.highestOneBit(length - 1) << 1));
            b = ByteBuffer.allocateDirect(Math.max(cap, length));
            answers.set(b);
        }
        b.clear().limit(length);
        return b;
    }

    /**
     * Starts serving on an engine (which the server then takes: worker 0 and its accepted peers).
     *
     * @param engine an engine of one worker, not shared with a client
     * @param source where blocks are read
     * @param chunkBytes the largest length a request may ask for
     * @param threads handler threads
     * @return the running server
     */
    public static BlockServer start(ChannelEngine engine, BlockSource source, int chunkBytes, int threads) {
        return start(engine, source, chunkBytes, threads, null);
    }

    /**
     * Starts serving on an engine (which the server then takes: worker 0 and its accepted peers), and answering
     * where map outputs are for READ.
     *
     * @param engine an engine of one worker, not shared with a client
     * @param source where blocks are read
     * @param chunkBytes the largest length a request may ask for
     * @param threads handler threads
     * @param grants the map output files granted for READ, or null (location requests are refused)
     * @return the running server
     */
    static BlockServer start(ChannelEngine engine, BlockSource source, int chunkBytes, int threads,
                             MapOutputGrants grants) {
        BlockServer s = new BlockServer(engine, source, chunkBytes, threads, grants);
        s.server.start();
        return s;
    }

    /** @return the address clients fetch from */
    public String address() {
        return server.address();
    }

    /** @return bytes answered */
    public long bytesServed() {
        return bytesServed.get();
    }

    /** @return requests answered with data */
    public long requestsServed() {
        return requestsServed.get();
    }

    /** @return location requests answered (map outputs granted for READ, or found granted) */
    public long locationsServed() {
        return locations.get();
    }

    /** @return corruption diagnoses answered */
    public long diagnosesServed() {
        return diagnoses.get();
    }

    /** @return requests answered with an error */
    public long errorsReturned() {
        return server.errorsReturned();
    }

    @Override
    public void close() {
        server.close();
    }
}
