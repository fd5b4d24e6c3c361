package io.rdmx.transport.internal;

import io.rdmx.transport.Bell;
import io.rdmx.transport.Connection;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.capability.Bells;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a thread that waits for something sleeps, and how others wake it: the one waiter mechanism of the channel
 * layer's readers and writers ({@code io.rdmx.channel.ChannelReader}, {@code ChannelWriter}) and of the shuffle's
 * sockets baseline. One sleeping thread at a time; any thread wakes.
 *
 * <p>With {@link Futex futexes} (Java 22+ on Linux) the thread sleeps on a word of its own, and on the shared
 * parked words of its mapped peers ({@code io.rdmx.channel.SharedRing}) at once: a thread of this process wakes it with one
 * {@code FUTEX_WAKE} on its word, a writer or reader in another process with one on the shared word. Without
 * futexes (Java 17-21) it parks ({@link LockSupport}) and only threads of this process wake it, unless it has
 * {@link #bell bells}: then it sleeps in a {@link Selector} of its own on them, a peer in another process wakes it
 * by writing a byte to its bell ({@link Bells#ringBell}: one system call, read by this very thread), and a
 * thread of this process with {@link Selector#wakeup()}. Peers without a bell ring doorbells, which the engine's
 * network thread turns into a {@link #wake()}.
 *
 * <p>No lost wake-up (the Dekker pattern, as in {@code SharedRing}): the sleeper {@link #arm arms} (a volatile
 * store, a full fence), checks its condition once more, and sleeps only if the word is still armed; a waker
 * changes the condition, issues a full fence, and takes the word back, waking the sleeper if it was armed.
 */
public final class Sleeper {
    private static final Futex FUTEX = Futex.get();
    private static final VarHandle INTS = MethodHandles.byteBufferViewVarHandle(int[].class,
        ByteOrder.nativeOrder());
    private static final int ARMED = 1;

    private final Object blocker;
    /** The process's futexes, or null: this sleeper parks, or waits on bells. */
    private final Futex futex;
    private final ByteBuffer word;
    private final long wordAddress;
    private Futex.WaitSet set;
    private int words;
    private volatile Thread waiter;
    /** Without futexes, once it has a bell: where it sleeps. Written under this object's lock, before arm(). */
    private volatile Selector selector;
    /** Sleeper thread: the connections it asked bells of, and their slots (-1: none), parallel. */
    private Connection[] bellPeers = new Connection[0];
    private Bell[] bellOf = new Bell[0];
    private boolean closed;
    private ByteBuffer drain;
    private static final Logger LOG = LoggerFactory.getLogger(Sleeper.class);

    /** @param blocker what a thread dump names as the parked thread's blocker (without futexes) */
    public Sleeper(Object blocker) {
        this(blocker, FUTEX != null);
    }

    /**
     * @param blocker what a thread dump names as the parked thread's blocker (without futexes)
     * @param futexes false to sleep without futexes even where the process has them (parks, or waits on bells:
     *                the Java 17 path; tests); true uses them where there are
     */
    public Sleeper(Object blocker, boolean futexes) {
        this.blocker = blocker;
        this.futex = futexes ? FUTEX : null;
        if (futex != null) {
            this.word = ByteBuffer.allocateDirect(64);
            this.wordAddress = futex.address(word, 0);
            this.set = futex.newWaitSet(1);
            this.set.set(0, wordAddress, ARMED);
            this.words = 1;
        } else {
            this.word = null;
            this.wordAddress = 0;
        }
    }

    /**
     * Sleeper thread: the bell on which a peer wakes this sleeper, opened on first use per connection (setup:
     * dials the peer once, {@link Bells#openBell}). Only without futexes, and only on connections that
     * offer bells; the sleeper then sleeps in its own selector on all its bells.
     *
     * @param c the peer's connection
     * @return the slot the peer rings ({@link Bells#ringBell}), or -1 if the peer wakes this sleeper another
     *         way (futexes, doorbell messages)
     */
    public int bell(Connection c) {
        if (futex != null) {
            return -1;
        }
        for (int i = 0; i < bellPeers.length; i++) {
            if (bellPeers[i] == c) {
                Bell b = bellOf[i];
                return b != null && b.channel().isOpen() ? b.slot() : -1;
            }
        }
        Bell b = null;
        try {
            Bells bells = c.capability(Bells.class).orElse(null);
            b = bells == null ? null : bells.openBell();
        } catch (RdmxException e) {
            if (c.isOpen()) {
                LOG.warn("no bell from peer '{}' (its wake-ups go through doorbell messages): {}", c.peerName(),
                    e.getMessage());
            } else {
                // the peer is going (a reader that sleeps once more before it reports the loss): nothing to warn of
                LOG.debug("no bell from peer '{}', whose connection is closed: {}", c.peerName(), e.getMessage());
            }
        }
        if (b != null && !addBell(b)) {
            b = null;
        }
        bellPeers = Arrays.copyOf(bellPeers, bellPeers.length + 1);
        bellOf = Arrays.copyOf(bellOf, bellOf.length + 1);
        bellPeers[bellPeers.length - 1] = c;
        bellOf[bellOf.length - 1] = b;
        return b == null ? -1 : b.slot();
    }

    /** @return the connections this sleeper asked bells of and still remembers (tests, diagnostics) */
    public synchronized int bellPeers() {
        return bellPeers.length;
    }

    /**
     * Sleeper thread: forgets a peer that is gone (its bell closes, if it had one), so that a sleeper that outlives
     * many peers keeps only its live peers' bells and connections. The next {@link #bell} of that connection would
     * ask for a new one.
     *
     * @param c the peer's connection
     */
    public synchronized void forgetBell(Connection c) {
        for (int i = 0; i < bellPeers.length; i++) {
            if (bellPeers[i] == c) {
                Bell b = bellOf[i];
                if (b != null) {
                    b.close(); // its key leaves the selector at the next select
                }
                int last = bellPeers.length - 1;
                Connection[] peers = Arrays.copyOf(bellPeers, last);
                Bell[] of = Arrays.copyOf(bellOf, last);
                if (i < last) {
                    peers[i] = bellPeers[last];
                    of[i] = bellOf[last];
                }
                bellPeers = peers;
                bellOf = of;
                return;
            }
        }
    }

    /**
     * Sleeper thread: sleeps on this bell too from now on (the selector opens with the first). Only without
     * futexes; {@link #bell} calls it, tests may directly.
     *
     * @param b the bell
     * @return false if this sleeper is closed, has futexes, or cannot watch the bell (then it is closed)
     */
    public synchronized boolean addBell(Bell b) {
        if (closed || futex != null) {
            b.close();
            return false;
        }
        try {
            Selector s = selector;
            if (s == null) {
                s = Selector.open();
                drain = ByteBuffer.allocateDirect(64);
            }
            b.channel().register(s, SelectionKey.OP_READ, b);
            selector = s;
            return true;
        } catch (IOException e) {
            LOG.warn("cannot watch a bell: {}", e.toString());
            b.close();
            return false;
        }
    }

    /** Closes the bells and the selector (their peers' rings fail, and they wake this sleeper no more). Any thread. */
    public synchronized void close() {
        closed = true;
        Selector s = selector;
        if (s != null) {
            try {
                for (SelectionKey k : s.keys()) {
                    ((Bell) k.attachment()).close();
                }
                s.close();
                selector = null;
            } catch (IOException | ClosedSelectorException e) {
                LOG.debug("closing a sleeper's selector: {}", e.toString());
            }
        }
        for (Bell b : bellOf) {
            if (b != null) {
                b.close();
            }
        }
    }

    /** @return true if threads sleep on futexes in this process (shared words can wake them) */
    public static boolean futexes() {
        return FUTEX != null;
    }

    /**
     * Sleeper thread: the shared words it sleeps on besides its own, each expected to hold {@code expected} while
     * it sleeps (a publisher that changes one and wakes it ends the sleep). Allocates: call when the words change,
     * not per sleep. Ignored without futexes.
     *
     * @param addresses the words' addresses in this process ({@link Futex#address})
     * @param expected the value they hold while the sleeper may sleep
     */
    public void sharedWords(long[] addresses, int expected) {
        if (futex == null) {
            return;
        }
        int n = 1 + addresses.length;
        if (set.capacity() < n) {
            set = futex.newWaitSet(Math.max(n, 2 * set.capacity()));
        }
        set.set(0, wordAddress, ARMED);
        for (int i = 0; i < addresses.length; i++) {
            set.set(i + 1, addresses[i], expected);
        }
        words = n;
    }

    /** Sleeper thread: from now on a {@link #wake()} ends the next {@link #sleep}; a full fence follows. */
    public void arm() {
        if (futex != null) {
            INTS.setVolatile(word, 0, ARMED);
        } else {
            waiter = Thread.currentThread();
        }
        VarHandle.fullFence();
    }

    /**
     * Sleeper thread, armed: sleeps until woken, the timeout, or (without futexes) an interrupt; may return
     * early. With futexes at most {@link Futex#MAX_SLICE_NANOS}, so the caller notices an interrupt that late.
     *
     * @param nanos the longest sleep
     */
    public void sleep(long nanos) {
        sleepOn(words, nanos);
    }

    /**
     * Sleeper thread, armed: {@link #sleep} on this sleeper's own word alone, not on the {@link #sharedWords shared
     * words} (a caller that did not publish that it sleeps there: their values would end the sleep at once).
     * Ends on {@link #wake()}, the timeout, or (on bells) a peer's bell; may return early.
     *
     * @param nanos the longest sleep
     */
    public void sleepOwn(long nanos) {
        sleepOn(1, nanos);
    }

    /** Sleeps on the first {@code n} words of the wait set (the own word is the first), or parks, or on bells. */
    private void sleepOn(int n, long nanos) {
        if (futex != null) {
            set.await(n, Math.min(nanos, Futex.MAX_SLICE_NANOS));
        } else {
            Selector s = selector;
            if (s == null || !selectBells(s, nanos)) {
                LockSupport.parkNanos(blocker, nanos);
            }
        }
    }

    /**
     * Sleeps in the selector (rounded up to whole milliseconds: select(0) would be forever), then reads what the
     * bells rang; a bell whose stream ended (its peer closed it or died) is closed, so it cannot spin the selector.
     *
     * @return false if the selector is closed (the caller parks instead)
     */
    private boolean selectBells(Selector s, long nanos) {
        if (nanos <= 0) {
            return true;
        }
        try {
            if (s.select(Math.max(1, (nanos + 999_999) / 1_000_000)) > 0) {
                for (SelectionKey k : s.selectedKeys()) {
                    Bell b = (Bell) k.attachment();
                    int n;
                    do {
                        drain.clear();
                        try {
                            n = b.channel().read(drain);
                        } catch (IOException e) {
                            n = -1;
                        }
                    } while (n > 0 && !drain.hasRemaining());
                    if (n < 0) {
                        k.cancel();
                        b.close();
                    }
                }
                s.selectedKeys().clear();
            }
            return true;
        } catch (IOException | ClosedSelectorException e) {
            return false;
        }
    }

    /** Sleeper thread: done sleeping. */
    public void disarm() {
        if (futex != null) {
            INTS.setOpaque(word, 0, 0);
        } else {
            waiter = null;
        }
    }

    /** Any thread, after it changed what the sleeper waits for: wakes it if it sleeps or is about to. */
    public void wake() {
        VarHandle.fullFence();
        if (futex != null) {
            if ((int) INTS.getVolatile(word, 0) == ARMED && INTS.compareAndSet(word, 0, ARMED, 0)) {
                futex.wake(wordAddress);
            }
        } else {
            Thread w = waiter;
            if (w != null) {
                Selector s = selector;
                if (s != null) {
                    s.wakeup();
                }
                LockSupport.unpark(w); // no system call unless parked (a closed selector's sleeper parks)
            }
        }
    }
}
