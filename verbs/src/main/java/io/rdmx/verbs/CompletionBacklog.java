package io.rdmx.verbs;

import io.rdmx.transport.Opcode;
import io.rdmx.transport.Status;

/**
 * The completions of one connection produced while its endpoint's lock was held (the progress thread polling the
 * CQ, a flush of outstanding requests), waiting to be emitted once the lock is released: an inline completion
 * handler may post, and a post takes that lock. A FIFO of parallel arrays that grows by doubling (rarely: it
 * holds at most one poll's batch plus one flush of the queues) and allocates nothing per completion.
 *
 * <p>Threading: every method is called under the instance's monitor (callers synchronize on it).
 */
final class CompletionBacklog {
    private long[] wrIds = new long[64];
    private Opcode[] ops = new Opcode[64];
    private Status[] statuses = new Status[64];
    private int[] lengths = new int[64];
    private int[] imms = new int[64];
    private boolean[] hasImms = new boolean[64];
    private String[] details = new String[64];
    private long head;
    private long tail;

    /** @return true if nothing waits */
    boolean isEmpty() {
        return head == tail;
    }

    /** @return completions waiting */
    int size() {
        return (int) (tail - head);
    }

    /**
     * Appends a completion.
     *
     * @param op opcode
     * @param wrId the request's id
     * @param status outcome
     * @param len bytes
     * @param imm immediate
     * @param hasImm whether the immediate is meaningful
     * @param detail explanation of a failure, else null
     */
    void add(Opcode op, long wrId, Status status, int len, int imm, boolean hasImm, String detail) {
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
