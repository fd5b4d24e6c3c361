package io.rdmx.bench.transport;

import io.rdmx.bench.channel.ProcStat;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Context switches and CPU time of the benchmark's process (client, server and every I/O thread: they share the
 * JMH fork) per iteration, beside the round trips made, from {@code /proc} ({@link ProcStat}); JMH reports the
 * public fields as secondary results, from which {@link TransportBench} derives switches and CPU microseconds
 * per round trip. Sampled at the iteration's edges, never per operation.
 */
@State(Scope.Thread)
@AuxCounters(AuxCounters.Type.EVENTS)
public class Switches {
    private static final long PID = ProcessHandle.current().pid();
    /** Context switches of the process during the iteration. */
    public long contextSwitches;
    /** CPU time of the process during the iteration, in nanoseconds. */
    public long cpuNanos;
    /** Round trips made during the iteration (the benchmark counts them). */
    public long roundTrips;
    private ProcStat start;

    /** Samples the process at the start of an iteration. */
    @Setup(Level.Iteration)
    public void begin() {
        roundTrips = 0;
        contextSwitches = 0;
        cpuNanos = 0;
        start = ProcStat.of(PID);
    }

    /** Samples it at the end. */
    @TearDown(Level.Iteration)
    public void end() {
        ProcStat d = ProcStat.of(PID).minus(start);
        contextSwitches = d.contextSwitches();
        cpuNanos = d.cpuNanos();
    }
}
