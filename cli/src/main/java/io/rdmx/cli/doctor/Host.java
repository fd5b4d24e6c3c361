package io.rdmx.cli.doctor;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.shm.ShmFabric;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Everything the doctor reads about the machine, injectable for tests: a file-system root under which every
 * absolute path ({@code /sys}, {@code /dev}, {@code /proc/self}, library directories) is looked up, the limits
 * reader, the JVM facts, the {@code ldconfig -p} output, a library loader and the providers.
 *
 * @param root the file-system root ({@code /} on this machine, a fixture directory in tests)
 * @param javaFeature the Java feature version of the JVM that will run the providers
 * @param nativeAccess whether native access is enabled for the class path (Java 22+), null when unknown or
 *     older than 22
 * @param env the environment ({@code LD_LIBRARY_PATH}, {@code RDMX_PROVIDER})
 * @param properties the system properties that matter ({@code os.arch}, {@code java.library.path},
 *     {@code rdmx.*})
 * @param ldconfig the output of {@code ldconfig -p}, empty when it cannot be run
 * @param loader loads a shared library (dlopen)
 * @param limits reads the resource limits
 * @param fabrics the providers on the class path
 * @param shmRoot the shm provider's root as the provider names it (an absolute path, looked up under
 *     {@code root})
 * @param cpus CPUs available to the JVM (the default worker count of the memlock estimate)
 */
public record Host(Path root, int javaFeature, Boolean nativeAccess, Map<String, String> env,
                   Map<String, String> properties, LdconfigOutput ldconfig, LibraryLoader loader,
                   LimitsReader limits, List<Fabric> fabrics, Path shmRoot, int cpus) {
    /** Runs {@code ldconfig -p}. */
    @FunctionalInterface
    public interface LdconfigOutput {
        /** @return its output, or empty when it is not installed or fails */
        Optional<String> get();
    }

    /** Loads a shared library as {@code dlopen} would. */
    @FunctionalInterface
    public interface LibraryLoader {
        /**
         * @param file the library file (on this machine's file system)
         * @return null when it loaded, else why not
         */
        String load(Path file);
    }

    /** Copies the maps and the list; checks the values. */
    public Host {
        Objects.requireNonNull(root, "root");
        env = Map.copyOf(env);
        properties = Map.copyOf(properties);
        Objects.requireNonNull(ldconfig, "ldconfig");
        Objects.requireNonNull(loader, "loader");
        Objects.requireNonNull(limits, "limits");
        fabrics = List.copyOf(fabrics);
        Objects.requireNonNull(shmRoot, "shmRoot");
        if (!shmRoot.isAbsolute()) {
            throw new IllegalArgumentException("shmRoot=" + shmRoot + " must be absolute");
        }
        if (cpus < 1) {
            throw new IllegalArgumentException("cpus=" + cpus + " must be >= 1");
        }
    }

    /** @return this machine and this JVM */
    public static Host system() {
        Path root = Paths.get("/");
        Map<String, String> props = new HashMap<>();
        for (String k : System.getProperties().stringPropertyNames()) {
            if (k.startsWith("rdmx.") || k.equals("os.arch") || k.equals("os.name") || k.equals("java.library.path")
                || k.equals("user.name")) {
                props.put(k, System.getProperty(k));
            }
        }
        int feature = Runtime.version().feature();
        return new Host(root, feature, nativeAccessEnabled(feature), System.getenv(), props, Host::runLdconfig,
            Host::dlopen, LimitsReader.procSelf(root), Fabrics.all(), ShmFabric.root().toAbsolutePath(),
            Runtime.getRuntime().availableProcessors());
    }

    /**
     * A copy with other limits.
     *
     * @param l the limits reader
     * @return the copy
     */
    public Host withLimits(LimitsReader l) {
        return new Host(root, javaFeature, nativeAccess, env, properties, ldconfig, loader, l, fabrics, shmRoot,
            cpus);
    }

    /**
     * A copy with another JVM.
     *
     * @param feature the Java feature version
     * @param nativeAccessEnabled whether native access is enabled, or null
     * @return the copy
     */
    public Host withJava(int feature, Boolean nativeAccessEnabled) {
        return new Host(root, feature, nativeAccessEnabled, env, properties, ldconfig, loader, limits, fabrics,
            shmRoot, cpus);
    }

    /**
     * A copy with other providers.
     *
     * @param f the providers
     * @return the copy
     */
    public Host withFabrics(List<Fabric> f) {
        return new Host(root, javaFeature, nativeAccess, env, properties, ldconfig, loader, limits, f, shmRoot,
            cpus);
    }

    /**
     * A copy with another {@code ldconfig -p} output.
     *
     * @param l the output
     * @return the copy
     */
    public Host withLdconfig(LdconfigOutput l) {
        return new Host(root, javaFeature, nativeAccess, env, properties, l, loader, limits, fabrics, shmRoot,
            cpus);
    }

    /**
     * A copy with other system properties.
     *
     * @param p the properties
     * @return the copy
     */
    public Host withProperties(Map<String, String> p) {
        return new Host(root, javaFeature, nativeAccess, env, p, ldconfig, loader, limits, fabrics, shmRoot, cpus);
    }

    /**
     * Where an absolute path of the machine is under {@link #root()}.
     *
     * @param absolute such as {@code /sys/class/infiniband}
     * @return the path to read
     */
    public Path path(String absolute) {
        if (!absolute.startsWith("/")) {
            throw new IllegalArgumentException("path=" + absolute + " must be absolute");
        }
        return root.resolve(absolute.substring(1));
    }

    /**
     * @param p an absolute path of the machine
     * @return the path to read under {@link #root()}
     */
    public Path path(Path p) {
        return path(p.toString());
    }

    /**
     * @param key a property name
     * @return its value, or null
     */
    String property(String key) {
        return properties.get(key);
    }

    /**
     * Whether native access is enabled for the class path ({@code Module.isNativeAccessEnabled()}, Java 22+,
     * called reflectively: this code is Java 17).
     */
    private static Boolean nativeAccessEnabled(int feature) {
        if (feature < 22) {
            return null;
        }
        try {
            Method m = Module.class.getMethod("isNativeAccessEnabled");
            return (Boolean) m.invoke(Host.class.getModule());
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    private static Optional<String> runLdconfig() {
        for (String exe : List.of("/sbin/ldconfig", "/usr/sbin/ldconfig", "/usr/bin/ldconfig")) {
            if (!Files.isExecutable(Paths.get(exe))) {
                continue;
            }
            try {
                Process p = new ProcessBuilder(exe, "-p").redirectErrorStream(true)
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
                String out;
                try (InputStream in = p.getInputStream()) {
                    out = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                }
                if (p.waitFor(5, TimeUnit.SECONDS) && p.exitValue() == 0) {
                    return Optional.of(out);
                }
                p.destroyForcibly();
            } catch (IOException e) {
                return Optional.empty();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Optional.empty();
            }
        }
        return Optional.empty();
    }

    private static String dlopen(Path file) {
        try {
            System.load(file.toAbsolutePath().toString());
            return null;
        } catch (UnsatisfiedLinkError | SecurityException e) {
            return e.getMessage();
        }
    }
}
