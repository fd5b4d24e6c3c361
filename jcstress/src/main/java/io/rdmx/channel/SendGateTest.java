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
 * The {@link ChannelWriter}'s in-flight hand-off ({@link SendGate}, the class the writer uses): a WRITE of
 * {@code [0, 32)} is in flight; the writer thread commits up to 64 and asks for a send (by the threshold, or by
 * a flush) while the network thread completes the WRITE and sends what is due. Whoever loses the CAS leaves the
 * range to the other, so the range {@code [32, 64)} is always posted: never committed data left unsent with
 * nothing in flight. (In this package of the jcstress module so that it reaches the package-private gate.)
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

        Base(int threshold) {
            gate = new SendGate(threshold, this);
            commit(32);
            gate.flush(); // [0, 32) in flight
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
            return true; // a posted WRITE: in flight until complete()
        }

        /** The network thread: the WRITE in flight completed ({@link ChannelWriter#onWriteComplete()}). */
        final void complete() {
            gate.complete();
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
}
