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
     * peer); the reader reads the peer's rings for the last time and lets go, a completion comes, the peer is
     * retired: neither the reader (r1) nor the completion (r2: 0 handled, 2 dropped) sees released memory, and
     * it goes once (r3).
     */
    @JCStressTest
    @Description("ReleaseGate: neither a reader that reports the loss nor a completion sees released memory")
    @Outcome(id = "0, [02], 1", expect = Expect.ACCEPTABLE, desc = "released once, after both let go")
    @Outcome(id = "1, .*, .*", expect = Expect.FORBIDDEN, desc = "the reader read released memory")
    @Outcome(id = ".*, 1, .*", expect = Expect.FORBIDDEN, desc = "the completion touched released memory")
    @Outcome(expect = Expect.FORBIDDEN, desc = "never released, or twice")
    @State
    public static class ReaderCompletionRetire extends Memory {
        /** The loss announced to one reader. */
        public ReaderCompletionRetire() {
            gate.hold(1);
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

        /** The failing thread, after the announcement. */
        @Actor
        public void fail() {
            gate.retire();
        }

        /** After all. */
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
