package io.rdmx.spi;

import java.util.Iterator;
import java.util.List;
import java.util.OptionalInt;
import java.util.ServiceLoader;

/** The platform hooks in effect: the first {@link PlatformHooks} on the class path, or a no-op. */
public final class Platform {
    private static final PlatformHooks NONE = new PlatformHooks() {
        @Override
        public void bindCurrentThread(String role, String fabric, String address) {
        }

        @Override
        public boolean bindWorkers() {
            return false;
        }

        @Override
        public OptionalInt tunedDefault(String key) {
            return OptionalInt.empty();
        }

        @Override
        public List<String> describe() {
            return List.of("affinity: rdmx-affinity is not on the class path (no pinning, generic defaults)");
        }
    };

    private static final PlatformHooks HOOKS = load();

    private Platform() {
    }

    private static PlatformHooks load() {
        Iterator<PlatformHooks> it = ServiceLoader.load(PlatformHooks.class, Platform.class.getClassLoader())
            .iterator();
        return it.hasNext() ? it.next() : NONE;
    }

    /** @return the hooks in effect */
    public static PlatformHooks hooks() {
        return HOOKS;
    }

    /**
     * A configuration value: the system property if set, else the platform's tuned default, else the fallback.
     *
     * @param key the key (also the system property name)
     * @param fallback the generic default
     * @return the value
     * @throws IllegalArgumentException if the system property is not an integer (names it)
     */
    public static int intValue(String key, int fallback) {
        String v = System.getProperty(key);
        if (v != null && !v.isBlank()) {
            try {
                return Integer.parseInt(v.trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(key + "=" + v + " is not an integer", e);
            }
        }
        OptionalInt t = HOOKS.tunedDefault(key);
        return t.isPresent() ? t.getAsInt() : fallback;
    }
}
