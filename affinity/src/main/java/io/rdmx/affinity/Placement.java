package io.rdmx.affinity;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Turns a policy, a topology and a device's locality into CPU sets for successive communication threads.
 * Hardware threads are taken core by core (SMT siblings together), in order of their first CPU.
 */
public final class Placement {
    private final Policy policy;
    private final CpuTopology topo;
    private final int nearSocket;
    private final AtomicInteger next = new AtomicInteger();

    /**
     * @param topo the topology
     * @param locality the NIC's locality
     * @param policy the policy
     */
    public Placement(CpuTopology topo, DeviceLocality locality, Policy policy) {
        this.policy = policy;
        this.topo = topo;
        this.nearSocket = topo.socketOf(locality.localCpus());
    }

    /** @return the socket closest to the NIC */
    public int nearSocket() {
        return nearSocket;
    }

    /** @return the policy */
    public Policy policy() {
        return policy;
    }

    /** @return the set for the next communication thread, or null for NONE */
    public CpuSet next() {
        return assign(next.getAndIncrement());
    }

    /**
     * @param i the communication thread's number (0, 1, ...)
     * @return its CPUs, or null for NONE
     */
    public CpuSet assign(int i) {
        switch (policy.kind()) {
            case NONE:
                return null;
            case O2ACS:
                return topo.cpus(nearSocket);
            case O2OCS: {
                List<CpuTopology.Core> cores = topo.cores(nearSocket);
                return cores.get(i % cores.size()).threads();
            }
            case O2OCC: {
                List<CpuTopology.Core> cores = topo.allCores();
                return cores.get(i % cores.size()).threads();
            }
            case O2NTS:
                return block(flat(topo.cores(nearSocket)), i, policy.threads());
            case O2NTC:
                return block(flat(topo.allCores()), i, policy.threads());
            default:
                throw new IllegalStateException("policy " + policy);
        }
    }

    private static List<Integer> flat(List<CpuTopology.Core> cores) {
        List<Integer> out = new ArrayList<>();
        for (CpuTopology.Core c : cores) {
            for (int t : c.threads().toArray()) {
                out.add(t);
            }
        }
        return out;
    }

    private static CpuSet block(List<Integer> threads, int i, int n) {
        int[] out = new int[Math.min(n, threads.size())];
        int blocks = Math.max(1, threads.size() / Math.max(1, out.length));
        int start = (i % blocks) * out.length;
        for (int k = 0; k < out.length; k++) {
            out[k] = threads.get((start + k) % threads.size());
        }
        return CpuSet.of(out);
    }
}
