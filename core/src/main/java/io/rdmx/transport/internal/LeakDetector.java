package io.rdmx.transport.internal;

import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reports registered regions that were never released (found when their node closes). Level from system
 * property {@value #LEVEL_PROP}: {@code disabled}, {@code simple} (default: log the region), {@code paranoid}
 * (also record and log where each region was registered).
 */
public final class LeakDetector {
    /** System property selecting the level. */
    public static final String LEVEL_PROP = "rdmx.leakDetection";
    /** Default level. */
    public static final String LEVEL_DEFAULT = "simple";

    private static final Logger LOG = LoggerFactory.getLogger(LeakDetector.class);
    private static final AtomicLong LEAKS = new AtomicLong();

    private LeakDetector() {
    }

    /** @return true if registration sites are recorded */
    public static boolean paranoid() {
        return "paranoid".equals(level());
    }

    private static String level() {
        String v = System.getProperty(LEVEL_PROP, LEVEL_DEFAULT).toLowerCase(Locale.ROOT);
        if (!v.equals("disabled") && !v.equals("simple") && !v.equals("paranoid")) {
            throw new IllegalArgumentException(LEVEL_PROP + "=" + v + " (expected disabled, simple or paranoid)");
        }
        return v;
    }

    /**
     * Reports one leaked region.
     *
     * @param what a description of the region
     * @param site where it was registered, or null
     */
    public static void report(String what, Throwable site) {
        LEAKS.incrementAndGet();
        if (!"disabled".equals(level())) {
            if (site != null) {
                LOG.warn("LEAK: {} was never released; registered at:", what, site);
            } else {
                LOG.warn("LEAK: {} was never released (set -D{}=paranoid to see where it was registered)",
                    what, LEVEL_PROP);
            }
        }
    }

    /** @return leaks reported since start */
    public static long leakCount() {
        return LEAKS.get();
    }
}
