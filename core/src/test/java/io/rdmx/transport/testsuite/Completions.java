package io.rdmx.transport.testsuite;

import static org.junit.jupiter.api.Assertions.fail;

import io.rdmx.transport.Completion;
import io.rdmx.transport.Node;
import io.rdmx.transport.RdmxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Test helpers that drain a node's completion queue with a bound. */
public final class Completions {
    private Completions() {
    }

    /**
     * Collects exactly {@code count} completions or fails listing what came.
     *
     * @param node the node
     * @param count how many
     * @param timeout the bound
     * @return the completions in arrival order
     */
    public static List<Completion> take(Node node, int count, Duration timeout) {
        List<Completion> out = new ArrayList<>();
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            while (out.size() < count) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    fail("node '" + node.name() + "': expected " + count + " completions within " + timeout
                        + ", got " + out.size() + ": " + out);
                }
                node.completionQueue().await(out::add, count - out.size(), left, TimeUnit.NANOSECONDS);
            }
        } catch (RdmxException e) {
            fail("node '" + node.name() + "' closed while waiting for completions: " + e.getMessage()
                + "; got " + out);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail("interrupted");
        }
        return out;
    }

    /**
     * Takes one completion.
     *
     * @param node the node
     * @return it
     */
    public static Completion one(Node node) {
        return take(node, 1, Duration.ofSeconds(10)).get(0);
    }

    /**
     * Asserts no completion arrives for a while.
     *
     * @param node the node
     * @param quiet how long to watch
     */
    public static void none(Node node, Duration quiet) {
        List<Completion> out = new ArrayList<>();
        try {
            node.completionQueue().await(out::add, 16, quiet.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RdmxException | InterruptedException e) {
            fail(e);
        }
        if (!out.isEmpty()) {
            fail("node '" + node.name() + "': expected no completion, got " + out);
        }
    }
}
