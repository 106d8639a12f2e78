//! The permission decision applied to one call: the compiled rules' verdict, the
//! conversation's grants, and asking the user (with "calls like this" offers) when it is
//! confirm. Deciding is [`PermissionRules::decide`](crate::permissions::PermissionRules::decide);
//! asking stays here. A view's call (MCP Apps) is asked for whenever it is not denied, one
//! question of that view at a time, and not at all once the view is muted (see the
//! `view_standing` module).

use super::view_standing::{muted_message, MUTED_REASON};
use super::{deadline_ms, Asker, Caller, ViewCaller};
use crate::calls::CallStatus;
use crate::events::EngineEvent;
use crate::ids::new_id;
use crate::interrupts::{Reply, Resolution};
use crate::permissions::grants::{self, GrantChoice};
use crate::permissions::rules::{self, Because, CallFacts, GrantCheck, RuleAction, RuleSpec};
use crate::permissions::{self, Answer, CallingAgent, PermissionRequest, Question};
use crate::tools::{Params, Tool, ToolContext};

/// The call a permission decision is about.
#[derive(Clone, Copy)]
pub(super) struct Asking<'a> {
    pub(super) call_id: &'a str,
    pub(super) name: &'a str,
    pub(super) tool: &'a dyn Tool,
    pub(super) typed: &'a Params,
    pub(super) tool_ctx: &'a ToolContext,
}

/// Apply the permission decision; `None` when the call may run, else its status, the reason
/// for a person and the message for the model.
pub(super) async fn permit(
    caller: &Caller<'_>,
    asker: Asker<'_>,
    call: Asking<'_>,
) -> Option<(CallStatus, String, String)> {
    let Asking {
        name,
        tool,
        typed,
        tool_ctx,
        ..
    } = call;
    let destination = tool.call_destination(typed, tool_ctx).await;
    let binding = grants::binding_for(tool, destination.as_ref());
    let facts = CallFacts {
        tool: name,
        params: typed,
        destination: destination.as_ref(),
    };
    let grants = conversation_grants(caller, &facts, &binding);
    // The global rules, the calling agent's own, and its leads' deny and confirm rules.
    let verdict = caller.ctx.permission_rules().decide(&Question {
        facts,
        tool_default: tool.permission(),
        agent: caller.agent.map(|a| CallingAgent {
            name: &a.name,
            tools: &a.tools,
        }),
        chain: caller.agent_chain,
        grants: &grants,
    });
    match (verdict.action, &verdict.because) {
        // A view's call is asked for even when allowed: see below.
        (RuleAction::Allow, _) if caller.view.is_none() => None,
        (RuleAction::Deny, Because::NotListed) => {
            let why = format!(
                "tool `{name}` is not available to this agent; use only the tools listed in your instructions"
            );
            Some((CallStatus::Denied, why.clone(), why))
        }
        (RuleAction::Deny, Because::Rule { rule, origin }) => {
            // The person sees the rule; the model only that a rule denied it (its pattern would
            // tell it what to rewrite).
            let why = format!("denied by {}", rules::describe_rule(rule, origin));
            Some((
                CallStatus::Denied,
                why,
                permissions::rule_denied_message(name),
            ))
        }
        (RuleAction::Deny, _) => {
            let why = "denied".to_string();
            Some((
                CallStatus::Denied,
                why.clone(),
                permissions::denied_message(name, &why),
            ))
        }
        (RuleAction::Confirm | RuleAction::Allow, _) => {
            let mut offer = Offer::new(&verdict, tool, name, typed, destination.as_ref(), binding);
            match caller.view {
                None => ask(caller, asker, call, offer).await.refusal,
                Some(view) => {
                    // A view's answer is never remembered: the dialog does not offer it.
                    offer.grantable = false;
                    offer.proposed_rule = None;
                    offer.proposal_note = None;
                    if verdict.action == RuleAction::Allow {
                        // No rule asks: the view's call is asked for as such.
                        offer.asking_rule = None;
                    }
                    ask_for_view(caller, view, asker, call, offer).await
                }
            }
        }
    }
}

/// Ask for `view`'s call, in its turn: refused without asking when the view is muted (or is
/// muted while the call waits for its turn); the person's answer counts toward muting it.
async fn ask_for_view(
    caller: &Caller<'_>,
    view: ViewCaller<'_>,
    asker: Asker<'_>,
    call: Asking<'_>,
    offer: Offer,
) -> Option<(CallStatus, String, String)> {
    let stopped = || {
        Some((
            CallStatus::NotRun,
            "withdrawn while it waited for the view's question before it".to_string(),
            "not run: the call was withdrawn".to_string(),
        ))
    };
    // The view's call is withdrawn through the caller's token (the card's, when it goes).
    let _turn = tokio::select! {
        turn = view.standing.turn() => turn,
        _ = caller.cancel.cancelled() => return stopped(),
    };
    if view.standing.is_muted() {
        return Some((
            CallStatus::Denied,
            MUTED_REASON.to_string(),
            muted_message(call.name),
        ));
    }
    let asked = ask(caller, asker, call, offer).await;
    match (asked.answer, asked.resolution) {
        (Answer::Deny, Resolution::Answered) => view.standing.refused(),
        (Answer::Approve | Answer::ApproveAlways, _) => view.standing.approved(),
        // Not the person's answer (withdrawn, timed out, the window gone): not counted.
        (Answer::Deny, _) => {}
    }
    asked.refusal
}

/// The conversation's grants checked against this call (none when they cannot be read: the
/// call is then asked for, never allowed by mistake).
fn conversation_grants(
    caller: &Caller<'_>,
    facts: &CallFacts<'_>,
    binding: &grants::Binding,
) -> Vec<GrantCheck> {
    // The conversation's grants are what the person allowed its agents: a view's calls are
    // asked for themselves (and its "always allow" is not kept, see `call_from_view`).
    if caller.view.is_some() {
        return Vec::new();
    }
    match caller
        .ctx
        .with_db(|c| grants::for_conversation(c, caller.conversation))
    {
        Ok(stored) => grants::check(&stored, facts, binding),
        Err(e) => {
            tracing::warn!("cannot read the conversation's permission grants: {e}");
            Vec::new()
        }
    }
}

/// What the dialog may offer to remember, from the verdict that asks.
struct Offer {
    grantable: bool,
    asking_rule: Option<String>,
    stale_grants: Vec<String>,
    proposed_rule: Option<RuleSpec>,
    proposal_note: Option<String>,
    binding: grants::Binding,
}

impl Offer {
    fn new(
        verdict: &rules::Verdict,
        tool: &dyn Tool,
        name: &str,
        typed: &Params,
        destination: Option<&rules::Destination>,
        binding: grants::Binding,
    ) -> Offer {
        let grantable = verdict.grantable();
        let asking_rule = match &verdict.because {
            Because::Rule { rule, origin } => Some(rules::describe_rule(rule, origin)),
            _ => None,
        };
        let (proposed_rule, proposal_note) = if grantable {
            let (rule, note) = grants::propose(tool, name, typed, destination);
            (Some(rule), note)
        } else {
            (None, None)
        };
        Offer {
            grantable,
            asking_rule,
            stale_grants: verdict.stale_grants.clone(),
            proposed_rule,
            proposal_note,
            binding,
        }
    }
}

/// What came of asking: the person's answer, how the question ended, and the call's refusal
/// when it may not run.
struct Asked {
    answer: Answer,
    resolution: Resolution,
    refusal: Option<(CallStatus, String, String)>,
}

/// Ask the user (terminal prompt or broker), announce and resolve the request.
async fn ask(caller: &Caller<'_>, asker: Asker<'_>, call: Asking<'_>, offer: Offer) -> Asked {
    let Asking {
        call_id,
        name,
        tool,
        typed,
        tool_ctx,
    } = call;
    let request = PermissionRequest {
        tool: name.to_string(),
        permission: crate::tool_spec::Permission::Confirm,
        params: typed.clone(),
        request: tool.request_preview(typed, tool_ctx).await,
        grantable: offer.grantable,
        asking_rule: offer.asking_rule.clone(),
        stale_grants: offer.stale_grants.clone(),
        proposed_rule: offer.proposed_rule.clone(),
        proposal_note: offer.proposal_note.clone(),
        view_of: caller.view_of().map(str::to_string),
    };
    let request_id = new_id("perm");
    let conversation_title = caller
        .ctx
        .with_db(|c| crate::conversations::title(c, caller.conversation))
        .ok()
        .flatten()
        .unwrap_or_default();
    let announce = |deadline_ms: Option<u64>| {
        caller.events.emit(EngineEvent::PermissionRequest {
            conversation_id: caller.conversation.to_string(),
            conversation_title: conversation_title.clone(),
            agent_chain: caller.agent_chain.to_vec(),
            call_id: call_id.to_string(),
            agent: caller.agent.map(|a| a.name.clone()).unwrap_or_default(),
            depth: caller.depth,
            deadline_ms,
            request_id: request_id.clone(),
            request: Box::new(request.clone()),
        })
    };
    let (Reply { answer, grant }, resolution) = match asker {
        Asker::Now(ask) => {
            announce(None);
            let answer = ask(&request);
            (
                Reply {
                    answer,
                    grant: None,
                },
                Resolution::Answered,
            )
        }
        Asker::Broker {
            broker,
            timeout,
            cancel,
        } => {
            // Registered before it is announced, so an immediate answer always finds it.
            let pending = broker.register(caller.conversation, &request_id);
            announce(Some(deadline_ms(timeout)));
            broker.wait_reply(pending, timeout, &cancel).await
        }
    };
    caller.events.emit(EngineEvent::PermissionResolved {
        conversation_id: caller.conversation.to_string(),
        request_id,
        answer,
        resolution,
    });
    let denied = |why: &str| {
        Some((
            CallStatus::Denied,
            why.to_string(),
            permissions::denied_message(name, why),
        ))
    };
    let refusal = match (answer, resolution) {
        (Answer::Approve, _) => None,
        // A rule that asks every time is never loosened: such an answer approves this call.
        (Answer::ApproveAlways, _) if !caller.remember_always || !offer.grantable => None,
        (Answer::ApproveAlways, _) => {
            remember_always(caller, name, grant, &offer.binding);
            None
        }
        (Answer::Deny, Resolution::Cancelled) => Some((
            CallStatus::NotRun,
            "the run was stopped while waiting for permission".to_string(),
            "not run: the run was stopped while waiting for permission".to_string(),
        )),
        (Answer::Deny, Resolution::TimedOut) => denied("no answer before the permission timeout"),
        (Answer::Deny, Resolution::ListenerGone) => {
            denied("the window asking for permission was closed")
        }
        // The person sees who refused it; the model's message stays the same.
        (Answer::Deny, Resolution::Answered) => Some((
            CallStatus::Denied,
            "denied by the user".to_string(),
            permissions::denied_message(name, "denied"),
        )),
    };
    Asked {
        answer,
        resolution,
        refusal,
    }
}

/// Remember "always allow" `name` in the caller's conversation: the whole tool, or the rule
/// the user chose (checked again here: an invalid one is not remembered), bound to what this
/// call is for. A run's conversation exists; a direct call's is created, since the user named
/// it for this call.
fn remember_always(
    caller: &Caller<'_>,
    name: &str,
    choice: Option<GrantChoice>,
    binding: &grants::Binding,
) {
    let rule = match choice.map(GrantChoice::checked) {
        None | Some(Ok(GrantChoice::Tool)) => None,
        Some(Ok(GrantChoice::Rule { rule })) => Some(rule),
        Some(Err(e)) => {
            tracing::warn!("not remembering an invalid rule: {e}");
            return;
        }
    };
    let direct = caller.agent.is_none();
    if let Err(e) = caller.ctx.with_db(|c| {
        if direct {
            crate::conversations::ensure(c, caller.conversation, "")?;
        }
        grants::add(c, caller.conversation, name, rule.as_ref(), binding)
    }) {
        tracing::warn!("cannot remember always-allow: {e}");
    }
}
