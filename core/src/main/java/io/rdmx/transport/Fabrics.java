package io.rdmx.transport;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;

/** Finds providers by name through {@link ServiceLoader}. */
public final class Fabrics {
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
}
