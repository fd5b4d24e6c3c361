package io.rdmx.bench.rpc;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Comparator;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.minikdc.MiniKdc;
import org.apache.hadoop.security.UserGroupInformation;

/**
 * The KDC of {@code bench rpc}'s Kerberos rows (a JDK 17 JVM: Hadoop's {@link MiniKdc}, Apache Kerby embedded):
 * starts a KDC in a fresh directory under the given one, creates the server's principal ({@value #SERVER}) and the
 * caller's ({@value #CLIENT}) with a keytab each, prints {@code KDC <realm> <krb5.conf> <server keytab> <client
 * keytab>}, and serves until its standard input closes; then stops and deletes the directory.
 */
public final class RpcKdc {
    /** The server's principal, without the realm: the JVMs of a variant connect to 127.0.0.1 as localhost. */
    static final String SERVER = "server/localhost";
    /** The caller's principal, without the realm. */
    static final String CLIENT = "alice";

    private RpcKdc() {
    }

    /**
     * Makes a principal this JVM's login user, from its keytab, under a Kerberos configuration: every proxy and
     * server of the JVM then runs as it (as a NameNode and its clients do).
     *
     * @param conf a configuration of {@link RpcBench#kerberos}
     * @param principal the principal with its realm
     * @param keytab its keytab
     * @throws IOException if the login fails
     */
    static void login(Configuration conf, String principal, String keytab) throws IOException {
        UserGroupInformation.setConfiguration(conf);
        UserGroupInformation.loginUserFromKeytab(principal, keytab);
    }

    /**
     * @param args the directory under which the KDC's own is made
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        Path work = Files.createTempDirectory(Paths.get(args[0]), "kdc");
        MiniKdc kdc = new MiniKdc(MiniKdc.createConf(), work.toFile());
        kdc.start();
        try {
            File server = work.resolve("server.keytab").toFile();
            File client = work.resolve("client.keytab").toFile();
            kdc.createPrincipal(server, SERVER);
            kdc.createPrincipal(client, CLIENT);
            System.out.println("KDC " + kdc.getRealm() + " " + kdc.getKrb5conf().getAbsolutePath() + " "
                + server.getAbsolutePath() + " " + client.getAbsolutePath());
            System.out.flush();
            InputStream in = System.in;
            try {
                while (in.read() >= 0) {
                    continue;
                }
            } catch (IOException ignored) {
                // parent gone: stop
            }
        } finally {
            kdc.stop();
            try (Stream<Path> files = Files.walk(work)) {
                files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
            }
        }
        System.exit(0);
    }
}
