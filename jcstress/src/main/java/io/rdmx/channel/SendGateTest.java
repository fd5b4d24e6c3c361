package io.rdmx.channel;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.JI_Result;

/**
 * The {@link ChannelWriter}'s in-flight hand-off ({@link SendGate}, the class the writer uses). With a window of
 * one WRITE ({@link Commit}, {@link Flush}): a WRITE of {@code [0, 32)} is in flight; the writer thread commits up
 * to 64 and asks for a send (by the threshold, or by a flush) while the network thread completes the WRITE and
 * sends what is due. Whoever loses the CAS leaves the range to the other, so the range {@code [32, 64)} is always
 * posted: never committed data left unsent with nothing in flight. With a window of two ({@link WindowFull},
 * {@link WindowFullFlush}, {@link WindowNotified}): two WRITEs fill it, and the writer's next batch races the
 * completion that frees a place: the batch is always posted, and never a third WRITE in flight. (In this package
 * of the jcstress module so that it reaches the package-private gate.)
 */
public final class SendGateTest {
    private SendGateTest() {
    }

    /** A writer's ring and transport, reduced to what the gate sees: the committed head and the posts. */
    abstract static class Base implements SendGate.Sender {
        private static final VarHandle HEAD;
        private static final VarHandle POSTED;

        static {
            try {
                MethodHandles.Lookup l = MethodHandles.lookup();
                HEAD = l.findVarHandle(Base.class, "head", long.class);
                POSTED = l.findVarHandle(Base.class, "posted", long.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        final SendGate gate;
        @SuppressWarnings("unused")
        private long head;
        @SuppressWarnings("unused")
        private long posted;
        /** The most sends in flight any send saw (counting itself); written by the gate's holder only. */
        private volatile int most;

        Base(int threshold) {
            this(threshold, 1);
        }

        /**
         * @param threshold the batch threshold
         * @param window the sends in flight at once; each window place is filled by a send of 32 bytes
         */
        Base(int threshold, int window) {
            gate = new SendGate(threshold, window, this);
            for (int i = 1; i <= window; i++) {
                commit(32L * i);
                gate.flush(); // [32 (i - 1), 32 i) in flight
            }
        }

        /** The ring's commit: a release store of the head ({@link RingBuffer#commit()}). */
        final void commit(long h) {
            HEAD.setRelease(this, h);
        }

        @Override
        public long committedAcquire() {
            return (long) HEAD.getAcquire(this);
        }

        @Override
        public boolean open() {
            return true;
        }

        @Override
        public boolean send(long from, long to) {
            POSTED.setVolatile(this, to);
            int n = gate.inFlightCount();
            if (n > most) {
                most = n;
            }
            return true; // a posted WRITE: in flight until complete()
        }

        /** The network thread: the oldest WRITE in flight completed ({@link ChannelWriter#onWriteComplete()}). */
        final void complete() {
            gate.completeOldest();
        }

        /**
         * After both: what was posted last, and whether a send is in flight.
         *
         * @param r r1 = the end of the last post, r2 = 1 if in flight
         */
        final void observe(JI_Result r) {
            r.r1 = (long) POSTED.getVolatile(this);
            r.r2 = gate.inFlight() ? 1 : 0;
        }

        /**
         * After both: what was posted last, and the most sends any send saw in flight.
         *
         * @param r r1 = the end of the last post, r2 = the most in flight
         */
        final void observeWindow(JI_Result r) {
            r.r1 = (long) POSTED.getVolatile(this);
            r.r2 = most;
        }
    }

    /** The writer's commit reaches the batch threshold ({@link ChannelWriter#commit()}). */
    @JCStressTest
    @Description("ChannelWriter in-flight CAS: commit over the threshold against a WRITE completion")
    @Outcome(id = "64, 1", expect = Expect.ACCEPTABLE, desc = "[32, 64) posted, by either thread")
    @Outcome(id = "32, 0", expect = Expect.FORBIDDEN, desc = "lost: [32, 64) committed, unsent, nothing in flight")
    @Outcome(expect = Expect.FORBIDDEN, desc = "impossible")
    @State
    public static class Commit extends Base {
        /** Threshold 1: every commit is due. */
        public Commit() {
            super(1);
        }

        /** The writer thread: commits to 64; the threshold is reached. */
        @Actor
        public void writer() {
            commit(64);
            gate.committed();
        }

        /** The network thread: the WRITE in flight completed. */
        @Actor
        public void network() {
            complete();
        }

        /**
         * After both.
         *
         * @param r r1 = the end of the last post, r2 = 1 if a send is in flight
         */
        @Arbiter
        public void arbiter(JI_Result r) {
            observe(r);
        }
    }

    /** The writer flushes below the threshold ({@link ChannelWriter#flush()}). */
    @JCStressTest
    @Description("ChannelWriter in-flight CAS: flush against a WRITE completion")
    @Outcome(id = "64, 1", expect = Expect.ACCEPTABLE, desc = "[32, 64) posted, by either thread")
    @Outcome(id = "32, 0", expect = Expect.FORBIDDEN, desc = "lost: a flush of [32, 64) never posted")
    @Outcome(expect = Expect.FORBIDDEN, desc = "impossible")
    @State
    public static class Flush extends Base {
        /** A threshold the test never reaches: only the flush makes a send due. */
        public Flush() {
            super(1 << 20);
        }

        /** The writer thread: commits to 64 (below the threshold) and flushes. */
        @Actor
        public void writer() {
            commit(64);
            gate.flush();
        }

        /** The network thread: the WRITE in flight completed. */
        @Actor
        public void network() {
            complete();
        }

        /**
         * After both.
         *
         * @param r r1 = the end of the last post, r2 = 1 if a send is in flight
         */
        @Arbiter
        public void arbiter(JI_Result r) {
            observe(r);
        }
    }

    /**
     * A window of two, full ({@code [0, 32)} and {@code [32, 64)} in flight): the writer commits to 96 (over the
     * threshold) while the network thread sees the oldest WRITE complete.
     */
    @JCStressTest
    @Description("SendGate window: a commit finds the window full while a completion frees a place")
    @Outcome(id = "96, 2", expect = Expect.ACCEPTABLE, desc = "[64, 96) posted, by either thread; two in flight")
    @Outcome(id = "64, 2", expect = Expect.FORBIDDEN, desc = "lost: [64, 96) unsent though the window has room")
    @Outcome(id = "96, 3", expect = Expect.FORBIDDEN, desc = "a third WRITE in a window of two")
    @Outcome(expect = Expect.FORBIDDEN, desc = "impossible")
    @State
    public static class WindowFull extends Base {
        /** Threshold 1, window 2. */
        public WindowFull() {
            super(1, 2);
        }

        /** The writer thread: commits to 96; the threshold is reached. */
        @Actor
        public void writer() {
            commit(96);
            gate.committed();
        }

        /** The network thread: the oldest WRITE completed. */
        @Actor
        public void network() {
            complete();
        }

        /**
         * After both.
         *
         * @param r r1 = the end of the last post, r2 = the most in flight
         */
        @Arbiter
        public void arbiter(JI_Result r) {
            observeWindow(r);
        }
    }

    /** As {@link WindowFull}, but the writer flushes below the threshold. */
    @JCStressTest
    @Description("SendGate window: a flush finds the window full while a completion frees a place")
    @Outcome(id = "96, 2", expect = Expect.ACCEPTABLE, desc = "[64, 96) posted, by either thread; two in flight")
    @Outcome(id = "64, 2", expect = Expect.FORBIDDEN, desc = "lost: a flush of [64, 96) never posted")
    @Outcome(id = "96, 3", expect = Expect.FORBIDDEN, desc = "a third WRITE in a window of two")
    @Outcome(expect = Expect.FORBIDDEN, desc = "impossible")
    @State
    public static class WindowFullFlush extends Base {
        /** A threshold the test never reaches, window 2. */
        public WindowFullFlush() {
            super(1 << 20, 2);
        }

        /** The writer thread: commits to 96 (below the threshold) and flushes. */
        @Actor
        public void writer() {
            commit(96);
            gate.flush();
        }

        /** The network thread: the oldest WRITE completed. */
        @Actor
        public void network() {
            complete();
        }

        /**
         * After both.
         *
         * @param r r1 = the end of the last post, r2 = the most in flight
         */
        @Arbiter
        public void arbiter(JI_Result r) {
            observeWindow(r);
        }
    }

    /**
     * A window of two, full; the notification that announced data up to 64 completes both WRITEs at once (SEND
     * mode, {@link ChannelWriter#onWriteComplete(long)}) while the writer commits to 96 and then to 128, each over
     * the threshold.
     */
    @JCStressTest
    @Description("SendGate window: two commits race a notification completing the whole window")
    @Outcome(id = "128, 2", expect = Expect.ACCEPTABLE, desc = "everything posted, in one or two WRITEs")
    @Outcome(id = "64, 2", expect = Expect.FORBIDDEN, desc = "lost: [64, 128) unsent, nothing in flight")
    @Outcome(id = "128, 3", expect = Expect.FORBIDDEN, desc = "a third WRITE in a window of two")
    @Outcome(id = "96, 2", expect = Expect.FORBIDDEN, desc = "lost: [96, 128) unsent though the window has room")
    @Outcome(expect = Expect.FORBIDDEN, desc = "impossible")
    @State
    public static class WindowNotified extends Base {
        /** Threshold 1, window 2. */
        public WindowNotified() {
            super(1, 2);
        }

        /** The writer thread: two commits, each over the threshold. */
        @Actor
        public void writer() {
            commit(96);
            gate.committed();
            commit(128);
            gate.committed();
        }

        /** The network thread: the notification of position 64 completed both WRITEs in flight. */
        @Actor
        public void network() {
            gate.complete(64);
        }

        /**
         * After both.
         *
         * @param r r1 = the end of the last post, r2 = the most in flight
         */
        @Arbiter
        public void arbiter(JI_Result r) {
            observeWindow(r);
        }
    }
}
