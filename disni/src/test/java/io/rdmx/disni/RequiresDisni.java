package io.rdmx.disni;

import io.rdmx.transport.Availability;
import org.junit.jupiter.api.Assumptions;

/**
 * Skips a test class, with the reason printed, where libdisni does not load or no RDMA device is usable (build it
 * with {@code disni/scripts/build-libdisni.sh}; {@code scripts/softroce-test.sh} runs these tests on Soft-RoCE
 * when given it).
 */
final class RequiresDisni {
    private RequiresDisni() {
    }

    static void assume() {
        Availability a = new DisniFabric().availability();
        if (!a.usable()) {
            System.out.println("disni: skipping RDMA tests here: " + a.reason());
        }
        Assumptions.assumeTrue(a.usable(), a.reason());
    }
}
