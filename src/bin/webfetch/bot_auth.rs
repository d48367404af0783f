//! `webfetch bot-auth` (extension): the key tooling of Web Bot Auth. `keygen`
//! writes a new signing key; `directory` prints the key directory a site fetches
//! to check the signatures (`webfetch serve` also serves it at the well-known
//! path). stdout carries only data: the thumbprint, or the directory.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Subcommand;

use webfetch::{DIRECTORY_MEDIA_TYPE, Profile, generate_key};

/// `webfetch bot-auth …`.
#[derive(Debug, Subcommand)]
pub(crate) enum BotAuthCommand {
    /// Write a new Ed25519 signing key to FILE as a JWK (mode 0600; an existing
    /// file is never overwritten) and print its JWK thumbprint, the `keyid` of
    /// every signature.
    Keygen {
        /// Where to write the key; must not exist yet.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
    /// Print the key directory of the configured key (a JWKS of its public
    /// part, application/http-message-signatures-directory+json) on stdout.
    Directory {
        /// A TOML file with a [tools.webfetch.bot_auth] table.
        #[arg(long)]
        config: PathBuf,
        /// Print the response a server should send instead: the Content-Type,
        /// Signature-Input and Signature header lines (signed for the
        /// signature_agent URL's authority, valid for a minute), a blank line,
        /// then the directory.
        #[arg(long)]
        headers: bool,
    },
}

/// Runs `command`: exit 0, or 1 after saying why on stderr.
pub(crate) fn run(command: BotAuthCommand) -> ExitCode {
    let result = match command {
        BotAuthCommand::Keygen { out } => keygen(&out),
        BotAuthCommand::Directory { config, headers } => directory(&config, headers),
    };
    match result {
        Ok(text) => {
            let mut stdout = std::io::stdout().lock();
            let _ = stdout
                .write_all(text.as_bytes())
                .and_then(|()| stdout.flush());
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("{message}");
            ExitCode::from(1)
        }
    }
}

/// A new key in `out` (created, never replaced; owner-only on Unix), and its
/// thumbprint as the line to print. The key itself is never printed.
fn keygen(out: &Path) -> Result<String, String> {
    let (jwk, thumbprint) = generate_key()?;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let mut file = options
        .open(out)
        .map_err(|error| format!("cannot create {}: {error}", out.display()))?;
    if let Err(error) = file
        .write_all(jwk.as_bytes())
        .and_then(|()| file.sync_all())
    {
        drop(file);
        // Ours, just created: a half-written key is of no use to anyone.
        let _ = std::fs::remove_file(out);
        return Err(format!("cannot write {}: {error}", out.display()));
    }
    eprintln!(
        "wrote a new Ed25519 key to {}; name it in [tools.webfetch.bot_auth] key_file",
        out.display()
    );
    Ok(format!("{thumbprint}\n"))
}

/// The key directory of the key `config` names, with the response's headers
/// first when `headers` is set.
fn directory(config: &Path, headers: bool) -> Result<String, String> {
    let loaded = super::checked_config(Some(config), Profile::Srd)?;
    let Some(auth) = loaded.settings.bot_auth else {
        return Err(format!(
            "{}: no [tools.webfetch.bot_auth] key_file and signature_agent: requests are \
             not signed, so there is no key directory to publish",
            config.display()
        ));
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    let (body, input, signature) = auth.directory(auth.directory_authority(), now);
    Ok(if headers {
        format!(
            "Content-Type: {DIRECTORY_MEDIA_TYPE}\nSignature-Input: {input}\n\
             Signature: {signature}\n\n{body}\n"
        )
    } else {
        format!("{body}\n")
    })
}
