package io.rdmx.transport;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.function.Predicate;

/** Finds providers by name through {@link ServiceLoader}. */
public final class Fabrics {
    /** The provider name that lets rdmx choose ({@link #choose(boolean, Predicate)}, {@link #forAnotherHost}). */
    public static final String AUTO = "auto";

    /** System property naming the default provider. */
    public static final String DEFAULT_PROVIDER_PROP = "rdmx.provider";
    /** Environment variable naming the default provider. */
    public static final String DEFAULT_PROVIDER_ENV = "RDMX_PROVIDER";
    /** The embedded default provider: processes on one host. */
    public static final String DEFAULT_PROVIDER = "shm";

    private Fabrics() {
    }

    /**
     * Every provider on the class path, sorted by name. A provider this JVM cannot load (compiled for a newer
     * Java, or failing in its constructor) is listed as unusable under the name its class suggests, with why.
     *
     * @return the providers
     */
    public static List<Fabric> all() {
        List<Fabric> out = new ArrayList<>();
        Iterator<Fabric> it = ServiceLoader.load(Fabric.class, Fabrics.class.getClassLoader()).iterator();
        for (int failures = 0; failures < 64; ) {
            try {
                if (!it.hasNext()) {
                    break;
                }
                out.add(it.next());
            } catch (ServiceConfigurationError | LinkageError e) {
                // the iterator goes on with the next provider after one that failed
                failures++;
                out.add(UnloadableFabric.of(e));
            }
        }
        out.sort(Comparator.comparing(Fabric::name));
        return out;
    }

    /**
     * The provider with this name.
     *
     * @param name the provider name, case-insensitive
     * @return the provider
     * @throws IllegalArgumentException when no provider has that name (the message lists the known ones)
     */
    public static Fabric get(String name) {
        String wanted = name.toLowerCase(Locale.ROOT);
        List<String> names = new ArrayList<>();
        for (Fabric f : all()) {
            if (f.name().equals(wanted)) {
                return f;
            }
            names.add(f.name());
        }
        throw new IllegalArgumentException("unknown provider name=" + name + ", known=" + names);
    }

    /**
     * The default provider: system property {@value #DEFAULT_PROVIDER_PROP}, else environment variable
     * {@value #DEFAULT_PROVIDER_ENV}, else {@value #DEFAULT_PROVIDER}.
     *
     * @return the provider
     */
    public static Fabric defaultFabric() {
        String name = System.getProperty(DEFAULT_PROVIDER_PROP);
        if (name == null || name.isBlank()) {
            name = System.getenv(DEFAULT_PROVIDER_ENV);
        }
        if (name == null || name.isBlank()) {
            name = DEFAULT_PROVIDER;
        }
        return get(name.trim());
    }

    /**
     * The provider {@code auto} uses to reach a peer: among the usable providers with an {@code autoRank} above 0
     * that reach it ({@link FabricTraits#reaches}) and that the peer serves, the one ranked highest. Today: shm on
     * the same host, else verbs where an RDMA device is up, else tcp.
     *
     * @param peerOnThisHost whether the peer runs on this host
     * @param peerServes whether the peer can be reached over a provider, by name (an advertisement; {@code n -> true}
     *     when the peer serves whatever is chosen)
     * @return the provider, or null if none qualifies
     */
    public static Fabric choose(boolean peerOnThisHost, Predicate<String> peerServes) {
        return choose(autoCandidates(), peerOnThisHost, peerServes);
    }

    /**
     * The provider a process opens to reach a peer on another host: the one named, or for {@code auto} the one
     * {@link #choose(boolean, Predicate)} ranks best for such a peer (verbs where an RDMA device is up, else tcp).
     * For tools and checks that run one process per host (the caller says which was chosen).
     *
     * @param provider a provider name or {@code auto}
     * @return the provider
     * @throws RdmxException for {@code auto} when no usable provider reaches another host, naming the usable ones and
     *     why the others are not
     */
    public static Fabric forAnotherHost(String provider) throws RdmxException {
        if (!AUTO.equals(provider)) {
            return get(provider);
        }
        Fabric f = choose(false, name -> true);
        if (f == null) {
            throw new RdmxException("provider=auto: no usable provider reaches another host; usable here: "
                + autoCandidates().stream().map(Fabric::name).toList() + ", not: "
                + autoUnusable().stream().map(u -> u.name() + " (" + u.availability().reason() + ")").toList());
        }
        return f;
    }

    /**
     * {@link #choose(boolean, Predicate)} among given providers (those a server serves, say): the one with the
     * highest {@code autoRank} above 0 that reaches the peer and that the peer serves.
     *
     * @param candidates the providers to choose among
     * @param peerOnThisHost whether the peer runs on this host
     * @param peerServes whether the peer can be reached over a provider, by name
     * @return the provider, or null if none qualifies
     */
    public static Fabric choose(Collection<Fabric> candidates, boolean peerOnThisHost, Predicate<String> peerServes) {
        Fabric best = null;
        for (Fabric f : candidates) {
            if (f.traits().autoRank() <= 0) {
                continue;
            }
            if (f.traits().reaches(peerOnThisHost) && peerServes.test(f.name())
                && (best == null || f.traits().autoRank() > best.traits().autoRank())) {
                best = f;
            }
        }
        return best;
    }

    /**
     * The providers {@code auto} may use on this host: usable, with an {@code autoRank} above 0; those that reach
     * this host only first, then by rank from the lowest (the one that works everywhere, the fallback, before the
     * faster ones that need a device). What a server serves under {@code auto}, in the order it advertises them.
     *
     * @return the providers
     */
    public static List<Fabric> autoCandidates() {
        List<Fabric> out = new ArrayList<>();
        for (Fabric f : all()) {
            if (f.traits().autoRank() > 0 && f.availability().usable()) {
                out.add(f);
            }
        }
        out.sort(Comparator.comparing((Fabric f) -> f.traits().reach() != FabricTraits.Reach.SAME_HOST)
            .thenComparingInt(f -> f.traits().autoRank()));
        return out;
    }

    /**
     * @return the providers {@code auto} could use on some host but cannot here, each with why (to log)
     */
    public static List<Fabric> autoUnusable() {
        List<Fabric> out = new ArrayList<>();
        for (Fabric f : all()) {
            if (f.traits().autoRank() > 0 && !f.availability().usable()) {
                out.add(f);
            }
        }
        return out;
    }

    /**
     * A provider rdmx ships, each in its own module: its name, what to put on the class path to have it, and what it
     * needs of the machine ({@link Fabric#needs()}).
     *
     * @param name the provider's name ({@link Fabric#name()})
     * @param artifacts what a class path needs for it, as a user would add it
     * @param needs what it needs of the machine beyond its module
     */
    public record Shipped(String name, String artifacts, Set<HostNeed> needs) {
        /** Validates and copies. */
        public Shipped {
            if (name == null || name.isBlank() || artifacts == null || artifacts.isBlank()) {
                throw new IllegalArgumentException("name=" + name + " and artifacts=" + artifacts + " must be given");
            }
            needs = needs.isEmpty() ? Set.of() : Collections.unmodifiableSet(EnumSet.copyOf(needs));
        }
    }

    private static final Set<HostNeed> RDMA = EnumSet.of(HostNeed.RDMA_LIBRARIES, HostNeed.RDMA_DEVICE,
        HostNeed.MEMLOCK);

    /**
     * The providers rdmx ships: the one place their names are registered. A configuration may name any of them
     * whether or not its module is on this class path (a member entry for another host, say); one that is not here
     * fails when a node of it opens, naming it.
     */
    private static final List<Shipped> SHIPPED = List.of(
        new Shipped("loopback", "rdmx-core", Set.of()),
        new Shipped("shm", "rdmx-core", Set.of(HostNeed.SHM_ROOT)),
        new Shipped("tcp", "rdmx-tcp", Set.of()),
        new Shipped("verbs", "rdmx-verbs (built with a JDK 22+: mvn -pl verbs -am install; scripts/rdmx does both on a"
            + " JDK 22+), run on a JDK 22+", union(RDMA, HostNeed.NATIVE_ACCESS)),
        new Shipped("disni", "rdmx-disni and com.ibm.disni:disni:2.1", union(RDMA, HostNeed.LIBDISNI)));

    private static Set<HostNeed> union(Set<HostNeed> a, HostNeed b) {
        Set<HostNeed> s = EnumSet.copyOf(a);
        s.add(b);
        return s;
    }

    /** @return the providers rdmx ships, in the order they are listed to users */
    public static List<Shipped> shipped() {
        return SHIPPED;
    }

    /**
     * @param name a provider's name
     * @return the shipped provider of that name, if rdmx ships one
     */
    public static Optional<Shipped> shipped(String name) {
        return SHIPPED.stream().filter(s -> s.name().equals(name)).findFirst();
    }

    /**
     * @return the names a configuration may use: the providers rdmx ships and every other provider on the class path
     */
    public static List<String> names() {
        List<String> out = new ArrayList<>();
        SHIPPED.forEach(s -> out.add(s.name()));
        for (Fabric f : all()) {
            if (!out.contains(f.name())) {
                out.add(f.name());
            }
        }
        return out;
    }
}
