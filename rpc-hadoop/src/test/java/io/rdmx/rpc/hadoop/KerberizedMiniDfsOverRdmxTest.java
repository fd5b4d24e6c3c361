package io.rdmx.rpc.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.security.PrivilegedExceptionAction;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonConfigurationKeys;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.protocolPB.ClientNamenodeProtocolPB;
import org.apache.hadoop.io.IOUtils;
import org.apache.hadoop.minikdc.MiniKdc;
import org.apache.hadoop.security.AccessControlException;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;

/**
 * A Kerberized HDFS (a MiniDFSCluster against a real KDC, {@link MiniKdc}) with the NameNode client protocol switched
 * to rdmx by configuration only, {@code hadoop.rpc.protection=authentication} (and {@code privacy}: the subclass
 * {@link KerberizedPrivacyMiniDfsOverRdmxTest}, every call and answer wrapped). The NameNode and the DataNode log in
 * from a keytab ({@code hdfs/localhost}, SPNEGO {@code HTTP/localhost}), block access tokens are on and data
 * transfer is SASL-protected, as Hadoop's own secure MiniDFS tests set them up (the DataNode on unprivileged ports,
 * {@code ignore.secure.ports.for.testing}). Every client call to the NameNode is checked to have gone over rdmx
 * (counted), each proxy's SASL negotiation too, and the NameNode to have seen the caller's Kerberos principal (the
 * owner of what it creates). A client that holds only an HDFS delegation token (TOKEN/DIGEST-MD5, not carried over
 * rdmx) calls over Hadoop's TCP client, and a caller without credentials is refused over rdmx.
 *
 * <p>Kerberos is JVM-global in Hadoop: the class resets {@link UserGroupInformation} to simple authentication
 * afterwards, as {@link KerberosFallbackTest} does.
 */
@EnabledForJreRange(max = JRE.JAVA_22, disabledReason = HadoopJdk.REASON)
@Timeout(value = 240, unit = TimeUnit.SECONDS)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KerberizedMiniDfsOverRdmxTest {
    /** Wrapped requests sent over rdmx (counted by the engine's test hook). */
    private static final AtomicLong WRAPPED = new AtomicLong();
    private java.nio.file.Path work;
    private MiniKdc kdc;
    private MiniDFSCluster cluster;
    private Configuration conf;
    private FileSystem fs;
    private UserGroupInformation alice;

    /** @return the cluster's {@code hadoop.rpc.protection} */
    String protection() {
        return "authentication";
    }

    @BeforeAll
    void startCluster() throws Exception {
        HadoopJdk.assumeHadoopRuns();
        work = Files.createTempDirectory("rdmx-krb-dfs");
        kdc = new MiniKdc(MiniKdc.createConf(), work.toFile());
        kdc.start();
        String realm = kdc.getRealm();
        File keytab = work.resolve("hdfs.keytab").toFile();
        kdc.createPrincipal(keytab, "hdfs/localhost", "HTTP/localhost");
        File aliceKeytab = work.resolve("alice.keytab").toFile();
        kdc.createPrincipal(aliceKeytab, "alice");
        String hdfs = "hdfs/localhost@" + realm;

        conf = new HdfsConfiguration();
        conf.set(CommonConfigurationKeys.HADOOP_SECURITY_AUTHENTICATION, "kerberos");
        conf.set(CommonConfigurationKeys.HADOOP_RPC_PROTECTION, protection());
        conf.set(DFSConfigKeys.DFS_NAMENODE_KERBEROS_PRINCIPAL_KEY, hdfs);
        conf.set(DFSConfigKeys.DFS_NAMENODE_KEYTAB_FILE_KEY, keytab.getPath());
        conf.set(DFSConfigKeys.DFS_DATANODE_KERBEROS_PRINCIPAL_KEY, hdfs);
        conf.set(DFSConfigKeys.DFS_DATANODE_KEYTAB_FILE_KEY, keytab.getPath());
        conf.set(DFSConfigKeys.DFS_WEB_AUTHENTICATION_KERBEROS_PRINCIPAL_KEY, "HTTP/localhost@" + realm);
        conf.set(DFSConfigKeys.DFS_WEB_AUTHENTICATION_KERBEROS_KEYTAB_KEY, keytab.getPath());
        conf.setBoolean(DFSConfigKeys.DFS_BLOCK_ACCESS_TOKEN_ENABLE_KEY, true);
        conf.set("dfs.data.transfer.protection", "authentication");
        conf.setBoolean(DFSConfigKeys.IGNORE_SECURE_PORTS_FOR_TESTING_KEY, true);
        conf.set("rpc.engine." + ClientNamenodeProtocolPB.class.getName(), RdmxRpcEngine.class.getName());
        conf.setInt("dfs.replication", 1);
        conf.setInt(CommonConfigurationKeys.IPC_CLIENT_CONNECT_MAX_RETRIES_ON_SASL_KEY, 0);
        UserGroupInformation.setConfiguration(conf);
        assertTrue(UserGroupInformation.isSecurityEnabled());
        // the daemons (and this test's superuser client) run as hdfs, as on a real cluster
        UserGroupInformation.loginUserFromKeytab(hdfs, keytab.getPath());
        alice = UserGroupInformation.loginUserFromKeytabAndReturnUGI("alice@" + realm, aliceKeytab.getPath());

        RdmxInvoker.wrappedRequestHook = t -> {
            WRAPPED.incrementAndGet();
            return t;
        };
        cluster = new MiniDFSCluster.Builder(conf, work.resolve("dfs").toFile()).numDataNodes(1).build();
        cluster.waitActive();
        fs = cluster.getFileSystem();
    }

    @AfterAll
    void stopCluster() throws Exception {
        RdmxInvoker.wrappedRequestHook = null;
        try {
            if (fs != null) {
                fs.close();
            }
            if (cluster != null) {
                cluster.shutdown();
            }
        } finally {
            UserGroupInformation.reset();
            Configuration simple = new Configuration(false);
            simple.set(CommonConfigurationKeys.HADOOP_SECURITY_AUTHENTICATION, "simple");
            UserGroupInformation.setConfiguration(simple);
            UserGroupInformation.reset();
            if (kdc != null) {
                kdc.stop();
            }
            if (work != null) {
                try (var files = Files.walk(work)) {
                    files.sorted(java.util.Comparator.reverseOrder()).map(java.nio.file.Path::toFile)
                        .forEach(File::delete);
                }
            }
        }
    }

    /** Runs one operation and checks it made NameNode calls over rdmx and none over the engine's TCP path. */
    private <T> T overRdmx(String what, MiniDfsOverRdmxTest.Op<T> op) throws Exception {
        long client = RdmxRpcEngine.clientCallsOverRdmx();
        long server = RdmxRpcEngine.serverCallsOverRdmx();
        long tcp = RdmxRpcEngine.clientCallsOverTcp();
        long wrapped = WRAPPED.get();
        T r = op.run();
        assertTrue(RdmxRpcEngine.clientCallsOverRdmx() > client, what + ": no client call went over rdmx");
        assertTrue(RdmxRpcEngine.serverCallsOverRdmx() > server, what + ": the NameNode got no call over rdmx");
        assertEquals(tcp, RdmxRpcEngine.clientCallsOverTcp(), what + ": a call fell back to TCP");
        if ("authentication".equals(protection())) {
            assertEquals(wrapped, WRAPPED.get(), what + ": a call was wrapped under protection=authentication");
        } else {
            assertTrue(WRAPPED.get() > wrapped, what + ": no call was wrapped under protection=" + protection());
        }
        return r;
    }

    @Test
    void kerberosClientsCreateWriteReadRenameListAndDeleteOverRdmxAsTheirPrincipal() throws Exception {
        Path dir = new Path("/krb");
        Path file = new Path(dir, "a.txt");
        Path renamed = new Path(dir, "b.txt");
        byte[] data = new byte[1 << 20];
        Arrays.fill(data, (byte) 'k');
        data[0] = 'x';
        assertTrue(overRdmx("mkdirs", () -> fs.mkdirs(dir)));
        overRdmx("create+write+close", () -> {
            try (FSDataOutputStream out = fs.create(file)) {
                out.write(data);                  // to the DataNode with a block token, SASL data transfer
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
        assertEquals("hdfs", list[0].getOwner(), "the NameNode did not see the Kerberos principal hdfs/localhost");

        // another principal, with its own FileSystem: the NameNode knows it as alice (owner of its file)
        Path home = new Path("/user/alice");
        assertTrue(overRdmx("mkdirs home", () -> fs.mkdirs(home)));
        overRdmx("chown home", () -> {
            fs.setOwner(home, "alice", null);
            return null;
        });
        long sessions = RdmxRpcEngine.clientSaslSessionsOverRdmx();
        FileSystem aliceFs = alice.doAs((PrivilegedExceptionAction<FileSystem>) () ->
            FileSystem.newInstance(fs.getUri(), conf));
        try {
            Path hers = new Path(home, "hers.txt");
            overRdmx("alice creates", () -> {
                aliceFs.create(hers).close();
                return null;
            });
            assertEquals("alice", overRdmx("alice stats", () -> aliceFs.getFileStatus(hers)).getOwner());
            assertTrue(RdmxRpcEngine.clientSaslSessionsOverRdmx() > sessions, "alice negotiated no SASL over rdmx");
            // and is refused what HDFS refuses her, over rdmx
            assertThrows(AccessControlException.class, () -> overRdmx("alice deletes hdfs's file",
                () -> aliceFs.delete(renamed, false)));
        } finally {
            aliceFs.close();
        }
        assertTrue(overRdmx("delete", () -> fs.delete(renamed, false)));
        assertFalse(overRdmx("exists", () -> fs.exists(renamed)));
    }

    /**
     * A delegation token is issued over rdmx (the NameNode issues tokens to Kerberos-authenticated callers only, so
     * this also shows it sees a Kerberos connection); a client that holds only that token authenticates with
     * TOKEN/DIGEST-MD5, which rdmx does not carry: its calls go over Hadoop's TCP client, and work.
     */
    @Test
    void aDelegationTokenIsIssuedOverRdmxAndATokenOnlyClientFallsBackToTcp() throws Exception {
        Token<?> token = overRdmx("getDelegationToken", () -> fs.getDelegationToken("hdfs"));
        assertNotNull(token, "no delegation token: the NameNode did not see a Kerberos-authenticated caller");
        Path p = new Path("/token-visible");
        overRdmx("create", () -> {
            fs.create(p).close();
            return null;
        });
        UserGroupInformation holder = UserGroupInformation.createRemoteUser("hdfs");
        holder.addToken(token);
        long rdmx = RdmxRpcEngine.clientCallsOverRdmx();
        long tcp = RdmxRpcEngine.clientCallsOverTcp();
        boolean exists = holder.doAs((PrivilegedExceptionAction<Boolean>) () -> {
            try (FileSystem tfs = FileSystem.newInstance(URI.create(fs.getUri().toString()), conf)) {
                return tfs.exists(p);
            }
        });
        assertTrue(exists);
        assertTrue(RdmxRpcEngine.clientCallsOverTcp() > tcp, "the token holder's call did not go over TCP");
        assertEquals(rdmx, RdmxRpcEngine.clientCallsOverRdmx(), "a token holder's call went over rdmx");
    }

    @Test
    void aCallerWithoutCredentialsIsRefusedOverRdmx() throws Exception {
        fs.exists(new Path("/"));                          // the client knows the NameNode's rdmx listener
        long refused = RdmxRpcEngine.clientSaslRefusedOverRdmx();
        long tcp = RdmxRpcEngine.clientCallsOverTcp();
        UserGroupInformation mallory = UserGroupInformation.createRemoteUser("mallory");
        IOException e = assertThrows(IOException.class, () -> mallory.doAs((PrivilegedExceptionAction<Boolean>) () -> {
            try (FileSystem mfs = FileSystem.newInstance(fs.getUri(), conf)) {
                return mfs.exists(new Path("/"));
            }
        }));
        assertTrue(RdmxRpcEngine.clientSaslRefusedOverRdmx() > refused, "not refused over rdmx: " + e);
        assertEquals(tcp, RdmxRpcEngine.clientCallsOverTcp(), "the caller went over TCP");
        boolean acl = false;
        for (Throwable c = e; c != null; c = c.getCause()) {
            acl |= c instanceof AccessControlException;
        }
        assertTrue(acl, "not refused as a caller without Kerberos credentials: " + e);
    }
}
