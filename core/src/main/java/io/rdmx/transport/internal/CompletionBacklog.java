package io.rdmx.transport.internal;

import io.rdmx.transport.Opcode;
import io.rdmx.transport.Status;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The completions of one connection produced while a lock that a post takes was held (verbs: the endpoint's lock,
 * held while the CQ is polled or the queues flushed; loopback: the pair's lock, held while requests execute),
 * waiting to be handed over once the lock is released: an inline completion handler may post. A FIFO of parallel
 * arrays that grows by doubling (rarely: it holds at most one poll's batch, or what one post executes, plus one
 * flush of the queues) and allocates nothing per completion.
 *
 * <p>Threading: any thread {@link #add adds} and then, holding no such lock, calls {@link #emit}. Completions go to
 * the {@link Sink} one at a time, in the order they were added, without a thread ever blocking on another: a
 * thread that finds another handing over leaves its completions to that one, which goes on until the backlog is
 * empty (a lock-free hand-off, {@code emitters}: see the jcstress test {@code CompletionBacklogEmitTest}).
 */
public final class CompletionBacklog {
    /** Where completions are handed over: one call at a time. */
    public interface Sink {
        /**
         * @param op opcode
         * @param wrId the request's id
         * @param status outcome
         * @param len bytes
         * @param imm immediate
         * @param hasImm whether the immediate is meaningful
         * @param detail explanation of a failure, else null
         */
        void handOver(Opcode op, long wrId, Status status, int len, int imm, boolean hasImm, String detail);
    }

    /**
     * Calls of {@link #emit} not yet answered: the one that raised it from 0 hands over, the others leave their
     * completions to it (it drains again until it brings the count back to 0).
     */
    private final AtomicInteger emitters = new AtomicInteger();
    /** Whether completions may wait (set under this object's monitor, cleared by the emitter that empties it). */
    private volatile boolean backlogged;
    private long[] wrIds = new long[64];
    private Opcode[] ops = new Opcode[64];
    private Status[] statuses = new Status[64];
    private int[] lengths = new int[64];
    private int[] imms = new int[64];
    private boolean[] hasImms = new boolean[64];
    private String[] details = new String[64];
    private long head;
    private long tail;

    /**
     * Appends a completion. Any thread.
     *
     * @param op opcode
     * @param wrId the request's id
     * @param status outcome
     * @param len bytes
     * @param imm immediate
     * @param hasImm whether the immediate is meaningful
     * @param detail explanation of a failure, else null
     */
    public void add(Opcode op, long wrId, Status status, int len, int imm, boolean hasImm, String detail) {
        synchronized (this) {
            append(op, wrId, status, len, imm, hasImm, detail);
            backlogged = true;
        }
    }

    /**
     * Hands every waiting completion to the sink, oldest first; returns at once if another thread is handing over
     * (that one takes these too). Any thread holding no lock a post takes; re-entrant (a sink that adds and emits
     * sees its completion handed over after it returns). One volatile read when nothing waits.
     *
     * @param sink where completions are handed over; the same for every call
     */
    public void emit(Sink sink) {
        if (!backlogged || emitters.getAndIncrement() != 0) {
            return;
        }
        int missed = 1;
        do {
            while (true) {
                long wrId;
                Opcode op;
                Status status;
                int len;
                int imm;
                boolean hasImm;
                String detail;
                synchronized (this) {
                    if (isEmpty()) {
                        backlogged = false;
                        break;
                    }
                    int slot = first();
                    wrId = wrIds[slot];
                    op = ops[slot];
                    status = statuses[slot];
                    len = lengths[slot];
                    imm = imms[slot];
                    hasImm = hasImms[slot];
                    detail = details[slot];
                    remove();
                }
                sink.handOver(op, wrId, status, len, imm, hasImm, detail);
            }
            missed = emitters.addAndGet(-missed);
        } while (missed != 0);
    }

    /** @return completions waiting. Any thread. */
    public synchronized int waiting() {
        return size();
    }

    /** @return true if nothing waits */
    boolean isEmpty() {
        return head == tail;
    }

    /** @return completions waiting */
    int size() {
        return (int) (tail - head);
    }

    /**
     * Appends a completion; the caller holds this object's monitor (or is the only thread: tests).
     *
     * @param op opcode
     * @param wrId the request's id
     * @param status outcome
     * @param len bytes
     * @param imm immediate
     * @param hasImm whether the immediate is meaningful
     * @param detail explanation of a failure, else null
     */
    void append(Opcode op, long wrId, Status status, int len, int imm, boolean hasImm, String detail) {
        if (tail - head == wrIds.length) {
            grow();
        }
        int i = (int) (tail & (wrIds.length - 1));
        wrIds[i] = wrId;
        ops[i] = op;
        statuses[i] = status;
        lengths[i] = len;
        imms[i] = imm;
        hasImms[i] = hasImm;
        details[i] = detail;
        tail++;
    }

    /** @return the slot of the oldest completion (valid until {@link #remove}); the backlog must not be empty */
    int first() {
        return (int) (head & (wrIds.length - 1));
    }

    long wrId(int slot) {
        return wrIds[slot];
    }

    Opcode op(int slot) {
        return ops[slot];
    }

    Status status(int slot) {
        return statuses[slot];
    }

    int length(int slot) {
        return lengths[slot];
    }

    int imm(int slot) {
        return imms[slot];
    }

    boolean hasImm(int slot) {
        return hasImms[slot];
    }

    String detail(int slot) {
        return details[slot];
    }

    /** Drops the oldest completion (its references are cleared). */
    void remove() {
        int i = first();
        ops[i] = null;
        statuses[i] = null;
        details[i] = null;
        head++;
    }

    private void grow() {
        int n = wrIds.length;
        long[] w = new long[n * 2];
        Opcode[] o = new Opcode[n * 2];
        Status[] s = new Status[n * 2];
        int[] l = new int[n * 2];
        int[] im = new int[n * 2];
        boolean[] h = new boolean[n * 2];
        String[] d = new String[n * 2];
        for (long k = head; k < tail; k++) {
            int from = (int) (k & (n - 1));
            int to = (int) (k & (2 * n - 1));
            w[to] = wrIds[from];
            o[to] = ops[from];
            s[to] = statuses[from];
            l[to] = lengths[from];
            im[to] = imms[from];
            h[to] = hasImms[from];
            d[to] = details[from];
        }
        wrIds = w;
        ops = o;
        statuses = s;
        lengths = l;
        imms = im;
        hasImms = h;
        details = d;
    }
}
