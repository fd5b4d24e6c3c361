package io.rdmx.cli.doctor;

import java.util.Objects;

/**
 * One line of a diagnosis: what was checked, what was found, and for a {@link Level#FAIL} (sometimes a
 * {@link Level#WARN}) the fix.
 *
 * @param level the outcome
 * @param text what was checked and found, naming the thing and the value
 * @param fix what to do about it, or null when nothing is to be done
 */
public record Check(Level level, String text, String fix) {
    /** Outcome of a check. */
    public enum Level {
        /** Fine. */
        OK,
        /** Works, but may not work well or may stop working (no fix needed for the provider to work). */
        WARN,
        /** The provider cannot work until this is fixed. */
        FAIL
    }

    /** Validates the fields: a failure always says how to fix it. */
    public Check {
        Objects.requireNonNull(level, "level");
        Objects.requireNonNull(text, "text");
        if (level == Level.FAIL && (fix == null || fix.isBlank())) {
            throw new IllegalArgumentException("a FAIL check needs a fix: text=" + text);
        }
    }

    /**
     * @param text what was found
     * @return an OK line
     */
    static Check ok(String text) {
        return new Check(Level.OK, text, null);
    }

    /**
     * @param text what was found
     * @param fix what to do, or null
     * @return a WARN line
     */
    static Check warn(String text, String fix) {
        return new Check(Level.WARN, text, fix);
    }

    /**
     * @param text what was found
     * @param fix what to do
     * @return a FAIL line
     */
    static Check fail(String text, String fix) {
        return new Check(Level.FAIL, text, fix);
    }
}
