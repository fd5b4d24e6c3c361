package io.rdmx.channel;

import java.util.concurrent.atomic.AtomicInteger;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * When a failed peer's memory goes ({@link ReleaseGate}): exactly once, after the peer was retired and every hold
 * was dropped, and never under a thread that holds it. The memory is a flag the release sets; a holder that finds
 * it set touched released memory (on verbs, a closed arena; on shm, a deleted file). (In this package of the
 * jcstress module so that it reaches the package-private gate.)
 */
public final class ReleaseGateTest {
    private ReleaseGateTest() {
    }

    /** The peer's memory: released once, by whichever thread drops the last hold. */
    static class Memory {
        final AtomicInteger releases = new AtomicInteger();
        volatile boolean freed;
        final ReleaseGate gate = new ReleaseGate(() -> {
            freed = true;
            releases.incrementAndGet();
        });
    }

    /**
     * A completion of the peer handled as it fails: it enters and touches the memory (r1 = 0, never 1: released
     * under it), or finds the release begun and touches nothing (r1 = 2). The memory goes once (r2 = 1).
     */
    @JCStressTest
    @Description("ReleaseGate: a completion handled as its peer fails never touches released memory")
    @Outcome(id = "0, 1", expect = Expect.ACCEPTABLE, desc = "handled before the release; released once")
    @Outcome(id = "2, 1", expect = Expect.ACCEPTABLE, desc = "dropped: the release had begun; released once")
    @Outcome(id = "1, .*", expect = Expect.FORBIDDEN, desc = "the completion touched released memory")
    @Outcome(id = ".*, 0", expect = Expect.FORBIDDEN, desc = "never released: the leak of issue 37")
    @Outcome(expect = Expect.FORBIDDEN, desc = "released twice")
    @State
    public static class CompletionVsRetire extends Memory {
        /** The completion thread. */
        @Actor
        public void completion(II_Result r) {
            if (gate.enter()) {
                r.r1 = freed ? 1 : 0;
                gate.leave();
            } else {
                r.r1 = 2;
            }
        }

        /** The failing thread. */
        @Actor
        public void fail() {
            gate.retire();
        }

        /** After both. */
        @Arbiter
        public void arbiter(II_Result r) {
            r.r2 = releases.get();
        }
    }

    /**
     * The loss was announced to one reader (its hold taken, as the failing thread does before it retires the
     * peer); the reader reads the peer's rings for the last time and lets go as the peer is retired: the reader
     * never sees released memory (r1 = 0), and it goes once (r2 = 1).
     */
    @JCStressTest
    @Description("ReleaseGate: a reader that reports the loss as the peer is retired never sees released memory")
    @Outcome(id = "0, 1", expect = Expect.ACCEPTABLE, desc = "released once, after the reader let go")
    @Outcome(id = "1, .*", expect = Expect.FORBIDDEN, desc = "the reader read released memory")
    @Outcome(expect = Expect.FORBIDDEN, desc = "never released, or twice")
    @State
    public static class ReaderVsRetire extends Memory {
        /** The loss announced to one reader. */
        public ReaderVsRetire() {
            gate.hold(1);
        }

        /** The reader, as it reports the loss. */
        @Actor
        public void reader(II_Result r) {
            r.r1 = freed ? 1 : 0;
            gate.leave();
        }

        /** The failing thread, after the announcement. */
        @Actor
        public void fail() {
            gate.retire();
        }

        /** After both. */
        @Arbiter
        public void arbiter(II_Result r) {
            r.r2 = releases.get();
        }
    }

    /**
     * The peer is retired and one reader still holds it; the reader lets go as a completion of the peer comes (the
     * last two holders race): neither sees released memory (r1 reader; r2: 0 handled, 2 dropped), and it goes
     * once (r3 = 1), on whichever thread let go last.
     */
    @JCStressTest
    @Description("ReleaseGate: the last reader and a completion letting go at once release once, under neither")
    @Outcome(id = "0, [02], 1", expect = Expect.ACCEPTABLE, desc = "released once, after both let go")
    @Outcome(id = "1, .*, .*", expect = Expect.FORBIDDEN, desc = "the reader read released memory")
    @Outcome(id = ".*, 1, .*", expect = Expect.FORBIDDEN, desc = "the completion touched released memory")
    @Outcome(expect = Expect.FORBIDDEN, desc = "never released, or twice")
    @State
    public static class ReaderVsCompletion extends Memory {
        /** Announced to one reader, then retired. */
        public ReaderVsCompletion() {
            gate.hold(1);
            gate.retire();
        }

        /** The reader, as it reports the loss. */
        @Actor
        public void reader(III_Result r) {
            r.r1 = freed ? 1 : 0;
            gate.leave();
        }

        /** The completion thread. */
        @Actor
        public void completion(III_Result r) {
            if (gate.enter()) {
                r.r2 = freed ? 1 : 0;
                gate.leave();
            } else {
                r.r2 = 2;
            }
        }

        /** After both. */
        @Arbiter
        public void arbiter(III_Result r) {
            r.r3 = releases.get();
        }
    }

    /**
     * The rings come after the failure: the completion thread that attaches them, inside the gate, takes a
     * reader's hold (r1 = 1) as the failing thread retires the peer, or finds the release begun (r1 = 0, no rings
     * to announce). A hold taken keeps the memory until the reader lets go (r2: releases before, 0), then it goes
     * once (r3 = 1).
     */
    @JCStressTest
    @Description("ReleaseGate: a hold taken inside the gate as the peer is retired keeps the memory until dropped")
    @Outcome(id = "1, 0, 1", expect = Expect.ACCEPTABLE, desc = "held: released once the reader let go")
    @Outcome(id = "0, 1, 1", expect = Expect.ACCEPTABLE, desc = "released first: the completion was dropped")
    @Outcome(expect = Expect.FORBIDDEN, desc = "released under a hold, never, or twice")
    @State
    public static class HoldInsideVsRetire extends Memory {
        private volatile boolean held;

        /** The completion thread handling the HELLO that attaches the rings after the failure. */
        @Actor
        public void attach() {
            if (gate.enter()) {
                gate.hold(1);
                held = true;
                gate.leave();
            }
        }

        /** The failing thread. */
        @Actor
        public void fail() {
            gate.retire();
        }

        /** After both: the reader that was told of the loss lets go. */
        @Arbiter
        public void arbiter(III_Result r) {
            r.r1 = held ? 1 : 0;
            r.r2 = releases.get();
            if (held) {
                gate.leave();
            }
            r.r3 = releases.get();
        }
    }
}
