package io.rdmx.rpc.hadoop;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.runner.Description;
import org.junit.runner.notification.Failure;
import org.junit.runner.notification.RunListener;

/** What became of each case of a Hadoop (JUnit 4) test class run through {@code JUnitCore}, by its name. */
final class Outcomes extends RunListener {
    /** Case name to "passed", "FAILED: ...", "skipped by the test: ..." or "ignored". */
    final Map<String, String> outcome = new TreeMap<>();
    /** The failures, in order. */
    final List<Failure> failures = new ArrayList<>();

    @Override
    public void testFinished(Description d) {
        outcome.putIfAbsent(d.getDisplayName(), "passed");
    }

    @Override
    public void testFailure(Failure f) {
        outcome.put(f.getDescription().getDisplayName(), "FAILED: " + f.getMessage());
        failures.add(f);
    }

    @Override
    public void testAssumptionFailure(Failure f) {
        outcome.put(f.getDescription().getDisplayName(), "skipped by the test: " + f.getMessage());
    }

    @Override
    public void testIgnored(Description d) {
        outcome.put(d.getDisplayName(), "ignored");
    }
}
