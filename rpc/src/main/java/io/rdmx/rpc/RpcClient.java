package io.rdmx.rpc;

import io.rdmx.channel.ChannelEngine;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Calls servers through a channel engine: many outstanding calls per server, multiplexed by call id over the
 * engine's ring to that server, answered through worker 0's reader, whose records complete each call by its id.
 *
 * <p>Any thread may call. The calling thread writes its request into the ring itself (fragments of at most a
 * ring record; the ring's writer lock is taken per fragment) and, for {@link #call}, then reads worker 0 itself
 * when no other thread does (it holds the reader role until its own response came, completing the calls of others
 * it meets on the way): a lone caller gets its answer with no hand-off between threads. A caller that finds the
 * role taken queues itself and parks until the reading thread completes its call, or, when that reader leaves
 * first, hands it the role ({@link ReaderRole}). The reader thread ({@code rdmx-rpc-client-<node>}) reads only for
 * asynchronous calls (their futures complete on whichever thread reads), and drains the ring when nobody read for
 * a while. Calls live in a table of {@link RpcConfig#maxOutstandingCalls()} slots indexed by call id: no map entry,
 * no boxing per call.
 *
 * <p>This class is the facade over four pieces: the {@link CallTable} (outstanding calls, their ids and
 * timeouts), the {@link ServerLinks} (a connection per server address), the {@link RequestSender} (the send path,
 * on the calling thread) and the {@link AnswerReader} (the reader role, reassembly and decoding of answers).
 *
 * <p>Failure is per server: a lost server fails the calls outstanding on it ({@link RpcPeerException} naming
 * it); calls to other servers go on. The next call to that address connects again, retrying within its
 * timeout. A response that comes after its call timed out is dropped and counted ({@link #lateResponses()}).
 * Malformed frames from a server fail its calls ({@link RpcProtocolException}) and close its connection.
 *
 * <p>The client takes the engine's worker 0 reader: one client per engine, and no {@link RpcServer} on the
 * same engine. It does not own the engine.
 */
public final class RpcClient implements AutoCloseable {
    private final RpcConfig config;
    private final String name;
    private final long clientHi;
    private final long clientLo;
    private final CallTable table;
    private final ServerLinks links;
    private final AnswerReader answers;
    private final RequestSender sender;
    private volatile boolean running = true;

    private RpcClient(ChannelEngine engine, RpcConfig config, byte[] clientId) {
        this.config = config;
        this.name = engine.node().name();
        this.clientHi = ClientIds.high(clientId);
        this.clientLo = ClientIds.low(clientId);
        // a random start: a restarted client (same node name) does not reuse the ids of its predecessor's calls
        this.table = new CallTable(name, config.maxOutstandingCalls(), ThreadLocalRandom.current().nextLong() >>> 2,
            this::asyncWaiting);
        this.links = new ServerLinks(engine, name, () -> running);
        this.answers = new AnswerReader(engine, name, config.maxMessageBytes(), table, () -> running);
        this.sender = new RequestSender(config, name, clientHi, clientLo, links, table, () -> running);
    }

    /** The call table: the first asynchronous call of a quiet period went in (the reader thread reads for it). */
    private void asyncWaiting() {
        answers.asyncWaiting();
    }

    /**
     * A client with the default configuration and a random client id.
     *
     * @param engine the engine whose worker 0 reader the client takes
     * @return the client, reading
     */
    public static RpcClient open(ChannelEngine engine) {
        return open(engine, RpcConfig.defaults());
    }

    /**
     * @param engine the engine whose worker 0 reader the client takes
     * @param config the configuration
     * @return the client, reading, with a random client id
     */
    public static RpcClient open(ChannelEngine engine, RpcConfig config) {
        UUID u = UUID.randomUUID();
        return open(engine, config, ClientIds.toBytes(u.getMostSignificantBits(), u.getLeastSignificantBits()));
    }

    /**
     * @param engine the engine whose worker 0 reader the client takes
     * @param config the configuration
     * @param clientId 16 bytes sent with every request (Hadoop's client id)
     * @return the client, reading
     */
    public static RpcClient open(ChannelEngine engine, RpcConfig config, byte[] clientId) {
        RpcClient c = new RpcClient(engine, config, clientId.clone());
        c.answers.start();
        return c;
    }

    /** @return the client's node name */
    public String name() {
        return name;
    }

    /** @return a copy of the 16-byte client id */
    public byte[] clientId() {
        return ClientIds.toBytes(clientHi, clientLo);
    }

    /** @return the configuration */
    public RpcConfig config() {
        return config;
    }

    /** @return responses that came after their call had timed out (dropped) */
    public long lateResponses() {
        return table.lateResponses();
    }

    /**
     * @return responses from a server for a call that was outstanding at another server (dropped: a server answers
     *     only the calls sent to it)
     */
    public long foreignResponses() {
        return table.foreignResponses();
    }

    /** @return times a calling thread took the reader role to read its own response (tests, diagnostics) */
    long callerReads() {
        return answers.callerReads();
    }

    /** @return calling threads parked while another thread reads (tests) */
    int followers() {
        return answers.followers();
    }

    /** @return calls that timed out */
    public long timedOut() {
        return table.timedOut();
    }

    /**
     * @param address a server's address
     * @return true if this client holds an open channel to it (false before the first call, and once the
     *         channel is found down: the next call dials again)
     */
    public boolean connected(String address) {
        return links.connected(address);
    }

    /** @return calls outstanding now (a scan of the call table) */
    public int outstanding() {
        return table.outstanding();
    }

    /**
     * Calls a method and waits for its answer.
     *
     * @param address the server's address ({@link RpcServer#address()})
     * @param method the method
     * @param request the request body (its remaining bytes; position unchanged; may be reused on return)
     * @param timeout bound on the whole call: connecting, sending and the answer
     * @return the response body
     * @throws RemoteRpcException if the handler threw (its class name and message)
     * @throws RpcTimeoutException if no answer came in time
     * @throws RpcPeerException if the server was lost or unreachable (names it)
     * @throws RpcMessageTooLargeException if the request or response exceeds a side's limit
     * @throws RpcException if the client is closed
     * @throws InterruptedException if interrupted (the call is abandoned)
     */
    public byte[] call(String address, int method, ByteBuffer request, Duration timeout)
        throws RpcException, InterruptedException {
        long t = timeout.toNanos();
        PendingCall p = new PendingCall(address, false, System.nanoTime() + t, t);
        p.waiter = Thread.currentThread();
        sender.send(p, method, request, null);
        return (byte[]) answers.await(p);
    }

    /**
     * Calls a method whose request body the calling thread writes straight into the ring (no array of its size,
     * no copy of it: see {@link RpcBody}), and waits for its answer.
     *
     * @param address the server's address
     * @param method the method
     * @param request writes the request body
     * @param timeout bound on the whole call
     * @return the response body
     * @throws RpcException as {@link #call(String, int, ByteBuffer, Duration)}, and if the body writer failed
     * @throws InterruptedException if interrupted (the call is abandoned)
     */
    public byte[] call(String address, int method, RpcBody request, Duration timeout)
        throws RpcException, InterruptedException {
        return call(address, method, request, null, timeout);
    }

    /**
     * Calls a method, writing its request body straight into the ring, and has its response decoded by the thread
     * reading the client's responses as it arrives (usually the calling thread itself): in place in the ring when it
     * came in one record (no array of its size, no copy of it). Keep the reader short: it holds up the responses of
     * every call of this client.
     *
     * @param <T> the decoded type
     * @param address the server's address
     * @param method the method
     * @param request writes the request body
     * @param reader decodes the response body, or null for the body as a {@code byte[]}
     * @param timeout bound on the whole call
     * @return what the reader returned
     * @throws RpcException as {@link #call(String, int, ByteBuffer, Duration)}, if the body writer failed, and if
     *                      the reader threw (its exception the cause, the server named)
     * @throws InterruptedException if interrupted (the call is abandoned)
     */
    @SuppressWarnings("unchecked")
    public <T> T call(String address, int method, RpcBody request, RpcResponseReader<T> reader, Duration timeout)
        throws RpcException, InterruptedException {
        long t = timeout.toNanos();
        PendingCall p = new PendingCall(address, false, System.nanoTime() + t, t);
        p.waiter = Thread.currentThread();
        p.reader = reader;
        sender.send(p, method, null, request);
        return (T) answers.await(p);
    }

    /**
     * Calls a method without waiting. The future completes on the thread reading the client's responses (the
     * client's reader thread, or a synchronous caller of this client waiting for its own answer): chain blocking
     * work with the {@code *Async} methods of {@link CompletableFuture}, not on that thread.
     *
     * @param address the server's address
     * @param method the method
     * @param request the request body (its remaining bytes are sent before this returns, unless it fails first)
     * @param timeout bound on the whole call (enforced to about 10 ms)
     * @return the response body, or the call's {@link RpcException}
     */
    public CompletableFuture<byte[]> callAsync(String address, int method, ByteBuffer request, Duration timeout) {
        return callAsync(address, method, request, null, timeout);
    }

    /**
     * Calls a method without waiting, and has its response decoded by the thread reading the client's responses
     * as it arrives: in place in the ring when it came in one record (no array of its size, no copy of it; a
     * response larger than a ring record comes reassembled in an array). The future completes, on that thread,
     * with what the reader returned, or fails with an {@link RpcException} naming the server if it threw. Keep
     * the reader short: it holds up the responses of every call of this client.
     *
     * @param <T> the decoded type
     * @param address the server's address
     * @param method the method
     * @param request the request body (its remaining bytes are sent before this returns, unless it fails first)
     * @param reader decodes the response body, or null for the body as a {@code byte[]}
     * @param timeout bound on the whole call (enforced to about 10 ms)
     * @return what the reader returned, or the call's {@link RpcException}
     */
    @SuppressWarnings("unchecked")
    public <T> CompletableFuture<T> callAsync(String address, int method, ByteBuffer request,
                                              RpcResponseReader<T> reader, Duration timeout) {
        long t = timeout.toNanos();
        PendingCall p = new PendingCall(address, true, System.nanoTime() + t, t);
        p.reader = reader;
        CompletableFuture<T> f = (CompletableFuture<T>) (CompletableFuture<?>) p;   // no reader: byte[]
        try {
            sender.send(p, method, request, null);
        } catch (RpcException e) {
            return f;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            table.fail(p, new RpcException("call to address=" + address + " interrupted while sending"));
        }
        // the reader thread's timeout scan covers it from now on
        return f;
    }

    /** @return the exception of a call made, or outstanding, once the client is closed */
    static RpcException closed(String name) {
        return new RpcException("rpc client '" + name + "' is closed");
    }

    /**
     * Fails every outstanding call ("rpc client closed with the call outstanding", naming call and server),
     * stops the reader thread (bounded wait). Later calls fail at once. Idempotent. The engine stays open.
     */
    @Override
    public void close() {
        if (!running) {
            return;
        }
        running = false;
        answers.close();
        table.failAll("rpc client '" + name + "' closed");
    }
}
