package io.rdmx.bench.chaos;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The short CI version of {@code rdmx chaos}: one process of three is killed or frozen mid-traffic, on shm
 * and on tcp, for both workloads; every survivor must name the lost peer within peerTimeout + margin, every
 * live process must end and leave no thread, descriptor or mapping, and nothing may stay under the shm root.
 */
class ChaosTest {
    @TempDir
    Path logs;

    static Stream<ChaosRound.Plan> plans() {
        return Stream.of(
            new ChaosRound.Plan(1, "shm", "channel", 1, "KILL", "-", 400, 0, "SEND"),
            new ChaosRound.Plan(2, "shm", "shuffle", 0, "STOP", "KILL", 300, 300, "WRITE_WITH_IMM"),
            new ChaosRound.Plan(3, "tcp", "shuffle", 2, "KILL", "-", 500, 0, "WRITE_WITH_IMM"),
            new ChaosRound.Plan(4, "tcp", "channel", 1, "STOP", "CONT", 600, 300, "SEND"));
    }

    @ParameterizedTest
    @MethodSource("plans")
    @Timeout(value = 80, unit = TimeUnit.SECONDS)
    void survivorsNameTheLostPeerInTimeAndLeaveNothingBehind(ChaosRound.Plan plan) throws Exception {
        ChaosRound.Settings s = new ChaosRound.Settings(Chaos.PEER_TIMEOUT_DEFAULT_MS, Chaos.MARGIN_DEFAULT_MS,
            Chaos.HARD_LIMIT_DEFAULT_MS, logs, Chaos.memberJvmArgs());
        ChaosRound.Outcome o = ChaosRound.run(plan, s);
        assertTrue(o.pass(), Chaos.line(o) + "\nproblems: " + o.problems() + "\nnotes: " + o.notes());
        assertTrue(o.detectionMs() >= 0, "no survivor reported the loss: " + o);
    }
}
