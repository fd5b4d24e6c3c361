package io.rdmx.affinity;

import io.rdmx.spi.PlatformHooks;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.FabricTraits;
import io.rdmx.transport.Fabrics;
import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rdmx-affinity implementation of core's {@link PlatformHooks}: pins core's communication threads (and
 * workers, if enabled) by the configured policy near the NIC of their node, and supplies tuned defaults.
 *
 * <p>Configuration (each key: system property, else environment variable):
 * {@value #POLICY_PROP} / {@code RDMX_AFFINITY_POLICY} (default {@code NONE}),
 * {@value #WORKERS_PROP} / {@code RDMX_AFFINITY_WORKERS} (default false),
 * {@value #SYSFS_PROP} (default {@code /sys}; fixture trees in tests).
 */
public final class AffinityHooks implements PlatformHooks {
    /** Policy key. */
    public static final String POLICY_PROP = "rdmx.affinity.policy";
    /** Worker binding key. */
    public static final String WORKERS_PROP = "rdmx.affinity.workers";
    /** sysfs root key. */
    public static final String SYSFS_PROP = "rdmx.affinity.sysfs";

    private static final Logger LOG = LoggerFactory.getLogger(AffinityHooks.class);

    private final Map<String, String> env;
    private final Policy policy;
    private final String policySource;
    private final boolean workers;
    private final Path sys;
    private final BindingCache cache = new BindingCache();
    private final Map<String, Placement> placements = new ConcurrentHashMap<>();
    private volatile CpuTopology topology;
    private volatile Tuning tuning;

    /** Reads the configuration from system properties and the environment (ServiceLoader). */
    public AffinityHooks() {
        this(System.getenv());
    }

    /**
     * @param env the environment to read
     */
    public AffinityHooks(Map<String, String> env) {
        this.env = env;
        String p = System.getProperty(POLICY_PROP);
        String src = "system property -D" + POLICY_PROP;
        if (p == null || p.isBlank()) {
            p = env.get("RDMX_AFFINITY_POLICY");
            src = "environment $RDMX_AFFINITY_POLICY";
        }
        if (p == null || p.isBlank()) {
            p = "NONE";
            src = "default";
        }
        this.policy = Policy.parse(p);
        this.policySource = src;
        String w = System.getProperty(WORKERS_PROP, env.getOrDefault("RDMX_AFFINITY_WORKERS", "false"));
        this.workers = Boolean.parseBoolean(w.trim().toLowerCase(Locale.ROOT));
        this.sys = Paths.get(System.getProperty(SYSFS_PROP, "/sys"));
    }

    /** @return the policy in effect */
    public Policy policy() {
        return policy;
    }

    /** @return the binding cache (tests, diagnostics) */
    public BindingCache cache() {
        return cache;
    }

    private CpuTopology topology() throws IOException {
        CpuTopology t = topology;
        if (t == null) {
            t = CpuTopology.read(sys);
            topology = t;
        }
        return t;
    }

    private Tuning tuning() {
        Tuning t = tuning;
        if (t == null) {
            int cores;
            try {
                cores = topology().allCores().size();
            } catch (IOException e) {
                cores = Runtime.getRuntime().availableProcessors();
            }
            t = new Tuning(System.getProperty("os.arch"), cores, env);
            tuning = t;
        }
        return t;
    }

    /**
     * The locality of the NIC a node uses.
     *
     * @param topo the topology
     * @param fabric provider name
     * @param address the node's address
     * @return the locality
     */
    public DeviceLocality locate(CpuTopology topo, String fabric, String address) {
        FabricTraits.Nic nic;
        try {
            nic = Fabrics.get(fabric).traits().nic();
        } catch (IllegalArgumentException unknown) {
            return DeviceLocality.fallback(topo, "provider " + fabric + " is not on the class path");
        }
        return locate(topo, fabric, nic, address);
    }

    /**
     * The locality of the device a node of a provider with these traits uses.
     *
     * @param topo the topology
     * @param fabric provider name, for the explanation
     * @param nic the device kind the provider declares ({@link FabricTraits#nic()})
     * @param address the node's address
     * @return the locality
     */
    DeviceLocality locate(CpuTopology topo, String fabric, FabricTraits.Nic nic, String address) {
        if (nic == FabricTraits.Nic.NONE) {
            return DeviceLocality.fallback(topo, "provider " + fabric + " uses no NIC");
        }
        String host = address;
        int colon = host.lastIndexOf(':');
        if (colon > 0) {
            host = host.substring(0, colon);
        }
        host = host.replace("[", "").replace("]", "");
        if (nic == FabricTraits.Nic.RDMA_DEVICE && !host.matches("[0-9.:a-fA-F]+")) {
            return DeviceLocality.rdmaDevice(sys, topo, host);
        }
        return DeviceLocality.forAddress(sys, topo, host);
    }

    /**
     * The placement for a node's threads.
     *
     * @param fabric provider
     * @param address node address
     * @return the placement
     * @throws IOException if the topology cannot be read
     */
    public Placement placement(String fabric, String address) throws IOException {
        CpuTopology topo = topology();
        return placements.computeIfAbsent(fabric + "|" + address,
            k -> new Placement(topo, locate(topo, fabric, address), policy));
    }

    @Override
    public void bindCurrentThread(String role, String fabric, String address) {
        if (policy.kind() == Policy.Kind.NONE) {
            return;
        }
        try {
            CpuSet s = cache.bind(() -> {
                try {
                    return placement(fabric, address).next();
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            if (s != null && cache.hits() == 0) {
                LOG.debug("{} thread {} pinned to CPUs {} ({})", role, Thread.currentThread().getName(), s, policy);
            }
        } catch (AffinityException | java.io.UncheckedIOException e) {
            LOG.warn("cannot pin {} thread '{}' by policy {}: {}", role, Thread.currentThread().getName(), policy,
                e.getMessage());
        }
    }

    @Override
    public boolean bindWorkers() {
        return workers && policy.kind() != Policy.Kind.NONE;
    }

    @Override
    public OptionalInt tunedDefault(String key) {
        return tuning().tunedDefault(key);
    }

    @Override
    public List<String> describe() {
        List<String> out = new ArrayList<>();
        out.add("Affinity: policy " + policy + " (" + policySource + "), workers "
            + (workers ? "bound" : "not bound") + ", pinning " + (Affinity.supported() ? "via sched_setaffinity"
            : "unsupported here (no-op)"));
        try {
            CpuTopology topo = topology();
            DeviceLocality first = null;
            String firstName = null;
            for (Fabric f : Fabrics.all()) {
                FabricTraits.Nic nic = f.traits().nic();
                boolean ip = nic == FabricTraits.Nic.IP_ROUTE;
                DeviceLocality d = locate(topo, f.name(), nic, ip ? "127.0.0.1:0" : "");
                out.add("  NIC locality: " + f.name() + (ip ? " on 127.0.0.1" : "") + " -> " + d.localCpus() + " ["
                    + d.source() + "]");
                if (first == null && ip) {
                    first = d;
                    firstName = f.name();
                }
            }
            if (policy.kind() != Policy.Kind.NONE && first != null) {
                Placement p = new Placement(topo, first, policy);
                out.add("  first communication threads (" + firstName + "): " + p.assign(0) + ", " + p.assign(1)
                    + ", " + p.assign(2));
            }
        } catch (IOException e) {
            out.add("  topology unreadable: " + e.getMessage());
        }
        out.add("Tuned values (" + tuning().arch().name().toLowerCase(Locale.ROOT) + "):");
        for (Tuning.Value v : tuning().all()) {
            out.add(String.format(Locale.ROOT, "  %-30s %10d  (%s; override -D%s or $%s)", v.key(), v.value(),
                v.source(), v.key(), Tuning.envName(v.key())));
        }
        return out;
    }
}
