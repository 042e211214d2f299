//! ResolveProviderContribution: the provider's prompt contribution (P-4),
//! today the GPT-5 overlay for OpenAI and Codex models (P-5).

use openclaw_config::{
    LoadOptions, Loader, NoEnv, UnresolvedVars, raw::Gpt5Personality as ConfigPersonality,
};
use openclaw_proto::prompt::v1 as pb;
use prompt_render::Gpt5Personality;

use crate::{
    convert::{contribution_to_pb, enum_value},
    error::ServerError,
};

/// Resolves the contribution for a provider/model pair.
pub fn resolve(
    loader: &Loader,
    req: pb::ResolveProviderContributionRequest,
) -> Result<pb::ResolveProviderContributionResponse, ServerError> {
    let pb::ResolveProviderContributionRequest {
        provider_id,
        model_id,
        config_json5,
        personality,
    } = req;
    if model_id.trim().is_empty() {
        return Err(ServerError::invalid("model_id", "is required"));
    }
    let explicit: pb::Gpt5Personality = enum_value("personality", personality)?;
    if !prompt_render::gpt5_applies(&provider_id, &model_id) {
        return Ok(pb::ResolveProviderContributionResponse {
            contribution: Some(pb::ProviderContribution::default()),
            gpt5_overlay: false,
            personality: pb::Gpt5Personality::Unspecified as i32,
        });
    }
    let chosen = match explicit {
        pb::Gpt5Personality::Friendly => Gpt5Personality::Friendly,
        pb::Gpt5Personality::Off => Gpt5Personality::Off,
        pb::Gpt5Personality::Unspecified if config_json5.trim().is_empty() => {
            Gpt5Personality::Friendly
        }
        pb::Gpt5Personality::Unspecified => {
            let options = LoadOptions {
                unresolved_vars: UnresolvedVars::Keep,
            };
            let config = loader.load(&config_json5, &NoEnv, &options)?;
            let provider = Some(provider_id.as_str()).filter(|p| !p.trim().is_empty());
            match config.gpt5_personality(provider) {
                ConfigPersonality::Off => Gpt5Personality::Off,
                ConfigPersonality::Friendly | ConfigPersonality::On => Gpt5Personality::Friendly,
            }
        }
    };
    Ok(pb::ResolveProviderContributionResponse {
        contribution: Some(contribution_to_pb(prompt_render::gpt5_contribution(chosen))),
        gpt5_overlay: true,
        personality: match chosen {
            Gpt5Personality::Friendly => pb::Gpt5Personality::Friendly,
            Gpt5Personality::Off => pb::Gpt5Personality::Off,
        } as i32,
    })
}
