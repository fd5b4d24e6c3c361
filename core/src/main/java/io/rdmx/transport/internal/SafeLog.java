package io.rdmx.transport.internal;

import org.slf4j.Logger;

/**
 * Logging for the threads that serve many peers (a provider's I/O thread, a channel engine's network thread), which
 * must outlive whatever one peer's work throws, including a log call that fails: an SLF4J binding or API that does
 * not link (the SLF4J 2 fluent API under Hadoop's SLF4J 1.7 throws {@link NoSuchMethodError}), or a stream that
 * throws. A failed log call is reported on {@code System.err} once per call, and nothing here ever throws.
 */
public final class SafeLog {
    private SafeLog() {
    }

    /**
     * {@code log.error(what, e)}, or {@code what} and {@code e} on System.err if that throws.
     *
     * @param log the logger
     * @param what what failed (a finished message, no placeholders)
     * @param e the failure
     */
    public static void error(Logger log, String what, Throwable e) {
        try {
            log.error(what, e);
        } catch (Throwable logFailed) {
            stderr(what + ": " + e + " (logging it failed: " + logFailed + ")");
        }
    }

    /**
     * {@code log.info(message)} ({@code log.debug} if {@code debug}), or the message on System.err if that throws.
     *
     * @param log the logger
     * @param debug true for DEBUG, false for INFO
     * @param message the finished message
     */
    public static void infoOrDebug(Logger log, boolean debug, String message) {
        try {
            if (debug) {
                log.debug(message);
            } else {
                log.info(message);
            }
        } catch (Throwable logFailed) {
            stderr(message + " (logging it failed: " + logFailed + ")");
        }
    }

    /**
     * Prints one line on System.err, prefixed {@code rdmx: }; swallows whatever that throws.
     *
     * @param line the line
     */
    public static void stderr(String line) {
        try {
            System.err.println("rdmx: " + line);
        } catch (Throwable ignored) {
            // nowhere left to tell: the thread goes on
        }
    }
}
