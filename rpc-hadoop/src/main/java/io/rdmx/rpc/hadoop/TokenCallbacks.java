package io.rdmx.rpc.hadoop;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.NameCallback;
import javax.security.auth.callback.PasswordCallback;
import javax.security.auth.callback.UnsupportedCallbackException;
import javax.security.sasl.AuthorizeCallback;
import javax.security.sasl.RealmCallback;
import org.apache.hadoop.security.AccessControlException;
import org.apache.hadoop.security.SaslRpcServer;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.SecretManager;
import org.apache.hadoop.security.token.SecretManager.InvalidToken;
import org.apache.hadoop.security.token.TokenIdentifier;

/**
 * The DIGEST-MD5 callbacks of a TOKEN SASL server over rdmx, with the meaning Hadoop's server gives them: the
 * SASL user name is the client's token identifier (base64, as Hadoop's client sends it), decoded by the server's
 * {@link SecretManager}; the password is what the secret manager says it is
 * ({@link SecretManager#retriableRetrievePassword}: an expired, cancelled or unknown token is refused there, with
 * the secret manager's own {@link InvalidToken}, and a standby or not-yet-ready secret manager answers
 * {@code StandbyException}/{@code RetriableException}), as base64 text; a client is authorized only as itself
 * (the authorization id is the authentication id). A wrong password fails inside the SASL server's digest check.
 * Hadoop's {@code SaslDigestCallbackHandler} needs a TCP {@code Server.Connection}, which a session over rdmx has
 * not; this one keeps no connection.
 */
final class TokenCallbacks implements javax.security.auth.callback.CallbackHandler {
    private final SecretManager<TokenIdentifier> secretManager;

    TokenCallbacks(SecretManager<TokenIdentifier> secretManager) {
        this.secretManager = secretManager;
    }

    @Override
    public void handle(Callback[] callbacks) throws IOException, UnsupportedCallbackException {
        NameCallback name = null;
        PasswordCallback password = null;
        AuthorizeCallback authorize = null;
        for (Callback c : callbacks) {
            if (c instanceof AuthorizeCallback) {
                authorize = (AuthorizeCallback) c;
            } else if (c instanceof NameCallback) {
                name = (NameCallback) c;
            } else if (c instanceof PasswordCallback) {
                password = (PasswordCallback) c;
            } else if (!(c instanceof RealmCallback)) {
                // the realm is the client's choice ("default"): nothing to check
                throw new UnsupportedCallbackException(c, "Unrecognized SASL DIGEST-MD5 Callback");
            }
        }
        if (password != null) {
            TokenIdentifier id = SaslRpcServer.getIdentifier(name == null ? null : name.getDefaultName(),
                secretManager);
            byte[] secret = secretManager.retriableRetrievePassword(id);
            id.getUser();                     // an identifier without a user is refused here, as by Hadoop
            password.setPassword(new String(Base64.getEncoder().encode(secret), StandardCharsets.UTF_8)
                .toCharArray());
        }
        if (authorize != null) {
            String authn = authorize.getAuthenticationID();
            boolean self = authn != null && authn.equals(authorize.getAuthorizationID());
            authorize.setAuthorized(self);
            if (self) {
                authorize.setAuthorizedID(authorize.getAuthorizationID());
            }
        }
    }

    /**
     * The user a completed TOKEN negotiation authenticated, as Hadoop's server derives it: the token's user (its
     * owner, or its owner acting through the token's real user), with the token's identifier attached and
     * authentication method TOKEN.
     *
     * @param authorizationId the SASL server's authorization id (the encoded token identifier)
     * @param secretManager the server's secret manager
     * @return the user
     * @throws IOException the identifier does not decode, or names no user
     */
    static UserGroupInformation user(String authorizationId, SecretManager<TokenIdentifier> secretManager)
        throws IOException {
        TokenIdentifier id = SaslRpcServer.getIdentifier(authorizationId, secretManager);
        UserGroupInformation ugi = id.getUser();
        if (ugi == null) {
            throw new AccessControlException("Can't retrieve username from tokenIdentifier.");
        }
        ugi.addTokenIdentifier(id);
        ugi.setAuthenticationMethod(SaslRpcServer.AuthMethod.TOKEN);
        return ugi;
    }

    /**
     * What a client is told of a failed negotiation, as Hadoop's server picks it: a {@code RetriableException}
     * or {@code StandbyException} anywhere in the causes, or an {@link InvalidToken} (its own cause when it has
     * one: a secret manager tunnels other exceptions through it); else the failure itself.
     *
     * @param e the failure
     * @return the exception to name to the client
     */
    static IOException trueCause(IOException e) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof org.apache.hadoop.ipc.RetriableException
                || c instanceof org.apache.hadoop.ipc.StandbyException) {
                return (IOException) c;
            }
            if (c instanceof InvalidToken) {
                return c.getCause() instanceof IOException ? (IOException) c.getCause() : (IOException) c;
            }
        }
        return e;
    }
}
