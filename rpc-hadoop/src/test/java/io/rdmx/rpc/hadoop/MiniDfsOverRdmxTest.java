package io.rdmx.rpc.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.protocolPB.ClientNamenodeProtocolPB;
import org.apache.hadoop.io.IOUtils;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;
import org.junit.jupiter.api.io.TempDir;

/**
 * Unmodified HDFS (a MiniDFSCluster: one NameNode, one DataNode) with the NameNode client protocol switched to
 * rdmx by configuration only: {@code rpc.engine.org.apache.hadoop.hdfs.protocolPB.ClientNamenodeProtocolPB}.
 * The NameNode's {@code RPC.setProtocolEngine} keeps the user's key, so its client RPC server is an
 * {@link RdmxServer}; the DFS client's proxy is the engine's. Every file-system operation is checked to have
 * reached the NameNode over rdmx through the engine's counters, not just to have worked.
 */
@EnabledForJreRange(max = JRE.JAVA_22, disabledReason = HadoopJdk.REASON)
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class MiniDfsOverRdmxTest {
    @TempDir
    static File base;
    private static MiniDFSCluster cluster;
    private static FileSystem fs;

    @BeforeAll
    static void startCluster() throws Exception {
        HadoopJdk.assumeHadoopRuns();
        Configuration conf = new HdfsConfiguration();
        conf.set("rpc.engine." + ClientNamenodeProtocolPB.class.getName(), RdmxRpcEngine.class.getName());
        conf.setInt("dfs.replication", 1);
        cluster = new MiniDFSCluster.Builder(conf, base).numDataNodes(1).build();
        cluster.waitActive();
        fs = cluster.getFileSystem();
    }

    @AfterAll
    static void stopCluster() throws Exception {
        if (fs != null) {
            fs.close();
        }
        if (cluster != null) {
            cluster.shutdown();
        }
    }

    /** Runs one operation and checks it made NameNode calls over rdmx and none over the engine's TCP path. */
    private static <T> T overRdmx(String what, Op<T> op) throws Exception {
        long client = RdmxRpcEngine.clientCallsOverRdmx();
        long server = RdmxRpcEngine.serverCallsOverRdmx();
        long tcp = RdmxRpcEngine.clientCallsOverTcp();
        T r = op.run();
        assertTrue(RdmxRpcEngine.clientCallsOverRdmx() > client, what + ": no client call went over rdmx");
        assertTrue(RdmxRpcEngine.serverCallsOverRdmx() > server, what + ": the NameNode got no call over rdmx");
        assertEquals(tcp, RdmxRpcEngine.clientCallsOverTcp(), what + ": a call fell back to TCP");
        return r;
    }

    /** An operation. */
    interface Op<T> {
        T run() throws Exception;
    }

    @Test
    void createWriteReadRenameListDeleteGoOverRdmx() throws Exception {
        Path dir = new Path("/rdmx");
        Path file = new Path(dir, "a.txt");
        Path renamed = new Path(dir, "b.txt");
        byte[] data = new byte[3 << 20];                       // several packets, one block
        Arrays.fill(data, (byte) 'r');
        data[0] = 'x';
        assertTrue(overRdmx("mkdirs", () -> fs.mkdirs(dir)));
        overRdmx("create+write+close", () -> {
            try (FSDataOutputStream out = fs.create(file)) {
                out.write(data);
            }
            return null;
        });
        byte[] read = overRdmx("open+read", () -> {
            byte[] b = new byte[data.length];
            try (FSDataInputStream in = fs.open(file)) {
                IOUtils.readFully(in, b, 0, b.length);
            }
            return b;
        });
        assertArrayEquals(data, read);
        assertTrue(overRdmx("rename", () -> fs.rename(file, renamed)));
        FileStatus[] list = overRdmx("list", () -> fs.listStatus(dir));
        assertEquals(1, list.length);
        assertEquals("b.txt", list[0].getPath().getName());
        assertEquals(data.length, list[0].getLen());
        assertTrue(overRdmx("delete", () -> fs.delete(renamed, false)));
        assertFalse(overRdmx("exists", () -> fs.exists(renamed)));
        assertEquals(0, overRdmx("list empty", () -> fs.listStatus(dir)).length);
    }

    @Test
    void aRemoteErrorOfTheNameNodeKeepsItsHadoopType() throws Exception {
        Path missing = new Path("/rdmx-missing/x");
        java.io.FileNotFoundException e = org.junit.jupiter.api.Assertions.assertThrows(
            java.io.FileNotFoundException.class, () -> overRdmx("open missing", () -> fs.open(missing)));
        assertTrue(e.getMessage().contains("rdmx-missing"), e.getMessage());
        String small = "small";
        Path p = new Path("/rdmx-small");
        overRdmx("create small", () -> {
            try (FSDataOutputStream out = fs.create(p)) {
                out.write(small.getBytes(StandardCharsets.UTF_8));
            }
            return null;
        });
        // create(overwrite=false) on an existing file: the NameNode's FileAlreadyExistsException over rdmx
        org.junit.jupiter.api.Assertions.assertThrows(org.apache.hadoop.fs.FileAlreadyExistsException.class,
            () -> overRdmx("create existing", () -> fs.create(p, false)));
    }
}
