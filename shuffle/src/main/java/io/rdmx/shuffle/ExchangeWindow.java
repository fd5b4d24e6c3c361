package io.rdmx.shuffle;

import io.rdmx.transport.ConnectionClosedException;
import java.util.Arrays;
import java.util.function.IntPredicate;

/**
 * One worker's per-exchange credit windows, both ways: as a sender, the bytes of each (exchange, receiving
 * worker) not credited back yet, which an offer may not take past {@link ShuffleConfig.Builder#windowBytes}; as a
 * receiver, the bytes taken from each (exchange, sending worker), credited back in credits
 * ({@link ShuffleFrameDescriptor}) once enough gathered. A record counts what it would take in the receiver's
 * inbox ({@link Inbox#charge}). One thread (the worker's).
 */
final class ExchangeWindow {
    private final int global;
    private final ShuffleTransport.Outbox[] outboxes;
    /** See {@link ShuffleConfig.Builder#windowBytes}. */
    private final int window;
    /**
     * Bytes taken from a sender that make a credit: half a window, or less where the largest record is more than
     * half of it (a sender stopped by its window holds more than window - the largest record).
     */
    private final int creditAt;
    /** Whether nothing more of an exchange may come here (nothing to round a credit up: credit at once). */
    private final IntPredicate noMoreOf;
    /** Sent: per (exchange, receiving worker) the bytes it has not credited back. */
    private final ExchangeCounts uncredited;
    /** Received: per (exchange, sending worker) the bytes taken and not credited back yet. */
    private final ExchangeCounts taken;
    /** Credits to send: (sending worker &lt;&lt; 16 | exchange id), each once. */
    private int[] owed = new int[8];
    private int owedCount;
    /** Set when an offer's record did not fit its exchange's window (not a full buffer): wait for a credit. */
    private boolean hit;
    /** The exchange whose window stopped an offer last, -1 if none. */
    private int hitExchange = -1;

    /**
     * @param global the worker's global index, for messages
     * @param outboxes per global worker, the buffer to it (credits go there)
     * @param windowBytes the window
     * @param maxRecord the largest record a peer may send, with its inbox header
     * @param noMoreOf whether nothing more of an exchange may come to this worker
     */
    ExchangeWindow(int global, ShuffleTransport.Outbox[] outboxes, int windowBytes, int maxRecord,
                   IntPredicate noMoreOf) {
        this.global = global;
        this.outboxes = outboxes;
        this.window = windowBytes;
        this.creditAt = Math.max(1, Math.min(windowBytes / 2, windowBytes - maxRecord));
        this.noMoreOf = noMoreOf;
        this.uncredited = new ExchangeCounts(outboxes.length);
        this.taken = new ExchangeCounts(outboxes.length);
    }

    /** @return the window, in bytes */
    int bytes() {
        return window;
    }

    /** @return bytes taken from one sender that make a credit */
    int creditAt() {
        return creditAt;
    }

    /**
     * Whether a record of exchange {@code id} may go to {@code g} now: its exchange's bytes that worker has not
     * credited back stay within the window with it (a record larger than the window goes alone; see
     * {@link ShuffleConfig.Builder#windowBytes}). If not, the offer waits for a credit.
     *
     * @param g the receiving worker
     * @param id the exchange
     * @param len the record's payload length
     * @return true if it may go
     */
    boolean open(int g, int id, int len) {
        long held = uncredited.get(id, g);
        // a sender stopped here holds more than window - charge >= window - the largest record >= creditAt, which
        // the receiver credits once it has taken it: it never waits for a credit that does not come
        if (held == 0 || held + Inbox.charge(len) <= window) {
            return true;
        }
        hit = true;
        hitExchange = id;
        return false;
    }

    /** @return whether a window stopped an offer since the last call (then cleared) */
    boolean takeHit() {
        boolean h = hit;
        hit = false;
        return h;
    }

    /** @return the exchange whose window stopped an offer last, -1 if none */
    int hitExchange() {
        return hitExchange;
    }

    /**
     * A record went to {@code g}: counts it against the window.
     *
     * @param g the receiving worker
     * @param id the exchange
     * @param len the record's payload length
     */
    void sent(int g, int id, int len) {
        uncredited.add(id, g, Inbox.charge(len));
    }

    /**
     * @param g a receiving worker
     * @param id an exchange
     * @return the bytes of it sent to that worker and not credited back
     */
    long uncredited(int g, int id) {
        return uncredited.get(id, g);
    }

    /**
     * A credit from a worker this one sent rows to: those bytes of that exchange are its to send again.
     *
     * @param source the crediting worker
     * @param id the exchange
     * @param bytes the bytes it credits back
     * @param mark the credit's mark
     * @throws IllegalStateException naming the worker, exchange and values if the credit is not one this worker
     *                               could have earned
     */
    void credited(int source, int id, int bytes, int mark) {
        long owing = uncredited.get(id, source);
        String bad = ShuffleFrameDescriptor.validateCredit(bytes, mark, owing);
        if (bad != null) {
            throw new IllegalStateException("worker " + global + ": credit from worker " + source + " for exchange "
                + id + ": " + bad + ", it holds " + owing + " uncredited bytes of it");
        }
        uncredited.add(id, source, -bytes);
    }

    /**
     * A record (or what was set aside of it) was delivered or dropped: its bytes go back to its sender, once
     * {@link #creditAt} of them gathered (or at once for an exchange nobody consumes or that has ended: nothing more
     * of it may come to round a credit up).
     *
     * @param source the sending worker
     * @param id the exchange
     * @param bytes what the record was charged
     */
    void took(int source, int id, int bytes) {
        long n = taken.add(id, source, bytes);
        if (n >= creditAt || noMoreOf.test(id)) {
            owe(source, id);
        }
    }

    /**
     * @param source a sending worker
     * @param id an exchange
     * @return the bytes of it taken from that worker and not credited back yet
     */
    long taken(int source, int id) {
        return taken.get(id, source);
    }

    /**
     * What every sender of an exchange is owed below the credit threshold goes back now.
     *
     * @param id the exchange
     */
    void oweAll(int id) {
        for (int s = 0; s < outboxes.length; s++) {
            if (taken.get(id, s) > 0) {
                owe(s, id);
            }
        }
    }

    private void owe(int source, int id) {
        int e = source << 16 | id;
        for (int i = 0; i < owedCount; i++) {
            if (owed[i] == e) {
                return;
            }
        }
        if (owedCount == owed.length) {
            owed = Arrays.copyOf(owed, 2 * owedCount);
        }
        owed[owedCount++] = e;
    }

    /** @return true if credits wait to be written */
    boolean owes() {
        return owedCount > 0;
    }

    /**
     * Writes the credits owed (a credit whose buffer is full stays owed); the next flush sends them. A receiver
     * of a credit that left or was lost needs none: its credit is dropped (a loss is reported where it matters,
     * by the reads and offers of its rank).
     */
    void sendCredits() {
        int kept = 0;
        for (int i = 0; i < owedCount; i++) {
            int e = owed[i];
            int source = e >>> 16;
            int id = e & 0xFFFF;
            long bytes = taken.get(id, source);
            if (bytes == 0) {
                continue;
            }
            ShuffleTransport.Outbox ob = outboxes[source];
            int at;
            try {
                at = ob.tryClaim(ShuffleFrameDescriptor.controlStream(id), ShuffleFrameDescriptor.CREDIT_LENGTH);
            } catch (ConnectionClosedException gone) {
                taken.add(id, source, -bytes); // a rank that left (or was lost) needs no credit; a loss is seen
                continue;                        // where it matters: the reads and offers of that rank
            }
            if (at < 0) {
                owed[kept++] = e;
                continue;
            }
            ShuffleFrameDescriptor.putCredit(ob.buffer(), at, (int) bytes);
            ob.commit();
            taken.add(id, source, -bytes);
        }
        owedCount = kept;
    }
}
