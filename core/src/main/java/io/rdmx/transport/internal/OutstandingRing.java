package io.rdmx.transport.internal;

import io.rdmx.transport.Opcode;

/**
 * The outstanding requests of a stream connection (shm, tcp): numbered in posting order and completed in that
 * order by the peer's cumulative ACKs, the oldest failed by a NAK, all flushed when the connection goes down.
 * Primitive arrays sized by the send-queue depth: nothing is allocated per request. A READ also records where its
 * answer goes and whether it came (answers arrive in posting order: the oldest unanswered READ is the one an
 * answer must name).
 *
 * <p>Not thread-safe: the connection guards it with its own lock (shm: its send lock; tcp: a ring lock taken
 * inside the send lock, never held across a system call), takes a slot under that lock and reads the slot's
 * fields before letting go (a posting thread may reuse the slot afterwards), then completes the request outside
 * the lock.
 */
public final class OutstandingRing {
    private static final Opcode[] OPCODES = Opcode.values();

    private final long[] seqs;
    private final long[] wrIds;
    private final int[] lengths;
    private final byte[] ops;
    private final boolean[] signaled;
    /** READ: the local region the answer goes into, and where; null for other requests. */
    private final RegionImpl[] locals;
    private final int[] localOffsets;
    /** READ: answered (its bytes arrived, or a refusal did). */
    private final boolean[] answered;
    /** READ: the peer's refusal, or null. */
    private final String[] refusals;
    /** The slots of the READs not answered yet, oldest first (answers come in posting order). */
    private final int[] unanswered;
    private int unansweredHead;
    private int unansweredCount;
    private int head;
    private int count;

    /** @param depth the send-queue depth: how many requests may be outstanding */
    public OutstandingRing(int depth) {
        this.seqs = new long[depth];
        this.wrIds = new long[depth];
        this.lengths = new int[depth];
        this.ops = new byte[depth];
        this.signaled = new boolean[depth];
        this.locals = new RegionImpl[depth];
        this.localOffsets = new int[depth];
        this.answered = new boolean[depth];
        this.refusals = new String[depth];
        this.unanswered = new int[depth];
    }

    /** @return how many requests may be outstanding */
    public int capacity() {
        return seqs.length;
    }

    /** @return requests outstanding now */
    public int count() {
        return count;
    }

    /** @return true if no request may be added */
    public boolean isFull() {
        return count >= seqs.length;
    }

    /**
     * Adds the newest request (the caller checked {@link #isFull()}).
     *
     * @param seq its sequence number (that of the frame before it, for a placed WRITE without a frame)
     * @param op its opcode
     * @param wrId its work request id
     * @param length its length
     * @param signaled whether it completes with a completion of its own
     */
    public void add(long seq, Opcode op, long wrId, int length, boolean signaled) {
        int i = (head + count) % seqs.length;
        seqs[i] = seq;
        ops[i] = (byte) op.ordinal();
        wrIds[i] = wrId;
        lengths[i] = length;
        this.signaled[i] = signaled;
        locals[i] = null;
        answered[i] = false;
        refusals[i] = null;
        count++;
    }

    /**
     * Adds the newest request, a READ whose answer the peer sends (the caller checked {@link #isFull()}).
     *
     * @param seq its sequence number
     * @param wrId its work request id
     * @param local the region the answer goes into
     * @param localOffset where in it
     * @param length its length
     * @param signaled whether it completes with a completion of its own on success
     */
    public void addRead(long seq, long wrId, RegionImpl local, int localOffset, int length, boolean signaled) {
        int i = (head + count) % seqs.length;
        add(seq, Opcode.READ, wrId, length, signaled);
        locals[i] = local;
        localOffsets[i] = localOffset;
        unanswered[(unansweredHead + unansweredCount) % seqs.length] = i;
        unansweredCount++;
    }

    /** @return READs whose answer has not arrived */
    public int unanswered() {
        return unansweredCount;
    }

    /**
     * The oldest READ not answered yet, if it has this sequence number: now answered.
     *
     * @param seq the sequence number an answer carries
     * @return its slot, or -1 if the oldest unanswered READ has another number (or there is none)
     */
    public int answer(long seq) {
        if (unansweredCount == 0) {
            return -1;
        }
        int i = unanswered[unansweredHead];
        if (seqs[i] != seq) {
            return -1;
        }
        unansweredHead = (unansweredHead + 1) % seqs.length;
        unansweredCount--;
        answered[i] = true;
        return i;
    }

    /**
     * @param slot a READ's slot
     * @return the region its answer goes into
     */
    public RegionImpl local(int slot) {
        return locals[slot];
    }

    /**
     * @param slot a READ's slot
     * @return where in {@link #local} its answer goes
     */
    public int localOffset(int slot) {
        return localOffsets[slot];
    }

    /**
     * Records the peer's refusal of a READ ({@link #answer answered} just now).
     *
     * @param slot its slot
     * @param why the peer's explanation
     */
    public void refuse(int slot, String why) {
        refusals[slot] = why;
    }

    /**
     * @param slot a slot just taken
     * @return the peer's refusal of that READ, or null
     */
    public String refusal(int slot) {
        return refusals[slot];
    }

    /**
     * @param slot a slot just taken
     * @return false for a READ whose answer has not arrived (an ACK covering it is the peer's error)
     */
    public boolean answered(int slot) {
        return locals[slot] == null || answered[slot];
    }

    /** @return the slot of the oldest request, removed, or -1 if none is outstanding */
    public int take() {
        if (count == 0) {
            return -1;
        }
        int i = head;
        head = (i + 1) % seqs.length;
        count--;
        if (locals[i] != null && !answered[i]) { // flushed or acknowledged unanswered: never answered now
            unansweredHead = (unansweredHead + 1) % seqs.length;
            unansweredCount--;
        }
        return i;
    }

    /**
     * @param acked the highest sequence number the peer acknowledged
     * @return the slot of the oldest request, removed, if {@code acked} covers it, else -1
     */
    public int takeAcked(long acked) {
        return count == 0 || seqs[head] > acked ? -1 : take();
    }

    /**
     * @param seq a sequence number the peer refused
     * @return the slot of the oldest request, removed, if it has that number, else -1
     */
    public int takeSeq(long seq) {
        return count > 0 && seqs[head] == seq ? take() : -1;
    }

    /**
     * @param slot a slot just taken
     * @return its work request id
     */
    public long wrId(int slot) {
        return wrIds[slot];
    }

    /**
     * @param slot a slot just taken
     * @return its opcode
     */
    public Opcode op(int slot) {
        return OPCODES[ops[slot]];
    }

    /**
     * @param slot a slot just taken
     * @return its length
     */
    public int length(int slot) {
        return lengths[slot];
    }

    /**
     * @param slot a slot just taken
     * @return whether it completes with a completion of its own
     */
    public boolean signaled(int slot) {
        return signaled[slot];
    }
}
