package io.rdmx.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code rdmx info} against fixture sysfs trees. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class RdmxInfoTest {
    @TempDir
    Path sys;

    private void cpu(int n, int pkg, int core) throws IOException {
        Path t = sys.resolve("devices/system/cpu/cpu" + n + "/topology");
        Files.createDirectories(t);
        Files.writeString(t.resolve("physical_package_id"), pkg + "\n");
        Files.writeString(t.resolve("core_id"), core + "\n");
    }

    @Test
    void parsesCpuLists() {
        assertEquals(List.of(0, 1, 2, 3, 8, 10, 11), Rdmx.parseList("0-3,8,10-11\n"));
        assertEquals(List.of(5), Rdmx.parseList("5"));
    }

    @Test
    void summarizesTwoSocketsWithSmt() throws IOException {
        Files.createDirectories(sys.resolve("devices/system/cpu"));
        Files.writeString(sys.resolve("devices/system/cpu/online"), "0-7\n");
        for (int c = 0; c < 8; c++) {
            cpu(c, c / 4, (c % 4) / 2);
        }
        Files.createDirectories(sys.resolve("devices/system/node/node0"));
        Files.createDirectories(sys.resolve("devices/system/node/node1"));
        String s = Rdmx.cpuSummary(sys);
        assertTrue(s.startsWith("8 online CPUs (0-7), 2 socket(s), 4 physical core(s), 2 thread(s) per core, "
            + "2 NUMA node(s)"), s);
    }

    @Test
    void infoListsProvidersAndExplainsMissingVerbs() throws IOException {
        Files.createDirectories(sys.resolve("devices/system/cpu"));
        Files.writeString(sys.resolve("devices/system/cpu/online"), "0\n");
        cpu(0, 0, 0);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        Rdmx.info(new PrintStream(bytes, true, StandardCharsets.UTF_8), sys);
        String out = bytes.toString(StandardCharsets.UTF_8);
        assertTrue(out.contains("loopback  usable"), out);
        assertTrue(out.contains("tcp       usable"), out);
        assertTrue(out.contains("verbs     unusable  no RDMA device"), out);
        assertTrue(out.contains("RDMA devices: none"), out);
        Files.createDirectories(sys.resolve("class/infiniband/rxe0"));
        bytes.reset();
        Rdmx.info(new PrintStream(bytes, true, StandardCharsets.UTF_8), sys);
        out = bytes.toString(StandardCharsets.UTF_8);
        assertTrue(out.contains("RDMA devices:\n  rxe0: no ports listed"), out);
    }

    @Test
    void infoSummarizesEachPortOfAnRxeDevice() throws IOException {
        Files.createDirectories(sys.resolve("devices/system/cpu"));
        Files.writeString(sys.resolve("devices/system/cpu/online"), "0\n");
        cpu(0, 0, 0);
        Path port = sys.resolve("class/infiniband/rxe0/ports/1");
        Files.createDirectories(port.resolve("gids"));
        Files.createDirectories(port.resolve("gid_attrs/ndevs"));
        Files.writeString(port.resolve("state"), "4: ACTIVE\n");
        Files.writeString(port.resolve("link_layer"), "Ethernet\n");
        Files.writeString(port.resolve("active_mtu"), "1024 (3)\n");
        Files.writeString(port.resolve("gids/0"), "fe80:0000:0000:0000:0250:56ff:fe8a:1b2c\n");
        Files.writeString(port.resolve("gids/1"), "0000:0000:0000:0000:0000:0000:0000:0000\n");
        Files.writeString(port.resolve("gid_attrs/ndevs/0"), "eth0\n");
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        Rdmx.info(new PrintStream(bytes, true, StandardCharsets.UTF_8), sys);
        String out = bytes.toString(StandardCharsets.UTF_8);
        assertTrue(out.contains("  rxe0: port 1 4: ACTIVE, Ethernet, active_mtu 1024 (3), 1 GID(s), netdev eth0\n"),
            out);
        assertTrue(out.contains("rdmx doctor [--provider NAME]"), out);
    }
}
