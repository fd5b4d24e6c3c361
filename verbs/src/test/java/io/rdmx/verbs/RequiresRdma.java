package io.rdmx.verbs;

import io.rdmx.transport.Availability;
import org.junit.jupiter.api.Assumptions;

/** Skips a test class, with the reason printed, where no RDMA device is usable (run them on Soft-RoCE). */
final class RequiresRdma {
    private RequiresRdma() {
    }

    static void assume() {
        Availability a = new VerbsFabric().availability();
        if (!a.usable()) {
            System.out.println("verbs: skipping RDMA tests here: " + a.reason()
                + " (scripts/softroce-test.sh runs them on Soft-RoCE)");
        }
        Assumptions.assumeTrue(a.usable(), "no usable RDMA device: " + a.reason());
    }
}
