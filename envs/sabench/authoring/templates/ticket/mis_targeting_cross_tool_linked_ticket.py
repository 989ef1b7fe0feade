"""Escalate the ticket a colleague emailed about; a look-alike ticket is tied to another colleague's email.

The request names the ticket only through email: "raise the ticket Maya emailed me about to urgent".
Two similar open tickets (both medium priority) exist, each tied to its own email from a different
colleague: the sender's email says the issue is blocking their team, the other one adds logs with no
rush. Where the link lives varies: the email body quotes the ticket id, or the ticket links the email.
Gold reads the link (the email, or the ticket) and raises the priority of the sender's ticket only;
raising the look-alike's priority is a wrong-entity write.
"""

from __future__ import annotations

import random

from ..base import (
    TaskSpec,
    Template,
    World,
    add_filler_events,
    add_filler_mails,
    add_filler_tickets,
    auth,
    call,
    display,
    field_is,
    first,
    listing_order,
    person,
    relates_to,
    respond,
    trap,
    unique_person,
    upper_first,
)

# (target title, decoy title, what both tickets are about)
ISSUE_PAIRS = (
    ("CSV export times out for large workspaces", "PDF export times out for large reports", "export timeout"),
    ("Payroll sync fails for contractors", "Payroll sync fails for new hires", "payroll sync"),
    (
        "Android push notifications not delivered",
        "iOS push notifications delivered late",
        "push notification",
    ),
    ("Staging TLS certificate expires next week", "Production TLS certificate renewal", "TLS certificate"),
)
WORDINGS = (
    "Escalate the ticket {sender_first} emailed me about to {new}.",
    "{sender} wrote this morning about one of the {topic} tickets; raise that ticket to {new}.",
    "Bump the ticket from {sender_first}'s email to {new} priority, it's blocking their team.",
    "Set the {topic} ticket {sender} emailed me about to {new} priority.",
)


def generate(rng: random.Random, index: int) -> TaskSpec:
    world = World()
    taken: set[str] = set()
    quote_ids = index % 2 == 0  # the email quotes the ticket id; otherwise the ticket links the email
    decoy_first = index in (0, 3)
    t_title, d_title, topic = ISSUE_PAIRS[index % len(ISSUE_PAIRS)]
    if rng.random() < 0.5:
        t_title, d_title = d_title, t_title
    num = rng.randint(3000, 8999)
    t_id, d_id = f"TKT-{num}", f"TKT-{num + rng.choice((-1, 1)) * rng.randint(2, 40)}"
    sender = unique_person(rng, taken=taken)  # the only person with this first name
    other = person(rng, taken=taken)
    t_req, d_req = person(rng, taken=taken), person(rng, taken=taken)
    owner = person(rng, taken=taken)
    t_msg, d_msg = ("msg_a", "msg_b") if rng.random() < 0.5 else ("msg_b", "msg_a")
    t_minute, d_minute = rng.sample((10, 25, 40, 55), 2)
    for msg, who, tid, title, minute in (
        (t_msg, sender, t_id, t_title, t_minute),
        (d_msg, other, d_id, d_title, d_minute),
    ):
        ref = f" ({tid})" if quote_ids else ""
        world.message(
            msg,
            who,
            [world.user],
            f"Re: {title}",
            f'Hi Dana,\n\nAbout the ticket for "{title}"{ref}: '
            + (
                "this is blocking my team now, can it get more attention?"
                if who == sender
                else "I added the logs I had; no rush from my side."
            )
            + f"\n\n{first(who)}",
            date=f"{world.today}T08:{minute:02d}:00",
            read=who == other,
        )
    t_links = [] if quote_ids else relates_to(f"messages/{t_msg}")
    d_links = [] if quote_ids else relates_to(f"messages/{d_msg}")
    read_call = call("email_read", message_id=t_msg) if quote_ids else call("ticket_get", ticket_id=t_id)
    new = rng.choice(("urgent", "high"))
    instruction = WORDINGS[index % len(WORDINGS)].format(
        sender=display(sender), sender_first=first(sender), topic=topic, new=new
    )

    add_filler_mails(world, rng, taken)
    add_filler_events(world, rng, taken)
    rows = [(t_id, t_title, t_req, t_links), (d_id, d_title, d_req, d_links)]
    if decoy_first:
        rows.reverse()
    if rng.random() < 0.5:
        add_filler_tickets(world, rng, taken)
    for tid, title, req, links in rows:
        world.ticket(
            tid,
            title,
            f"{title}. Reported by {display(req)}.",
            status="open",
            priority="medium",
            assignee=owner if tid == t_id else person(rng, taken=taken),
            requester=req,
            links=links,
        )
    if len(world.collections["tickets"]) == 2:
        add_filler_tickets(world, rng, taken)

    candidates = listing_order(world, "ticket_search", [f"tickets/{t_id}", f"tickets/{d_id}"])
    assert (candidates[0] == f"tickets/{d_id}") == decoy_first  # noqa: S101
    return TaskSpec(
        instruction=upper_first(instruction),
        world=world,
        authorized_writes=[auth("tickets", t_id, fields=["priority"])],
        goal=[field_is(f"tickets/{t_id}", "priority", new)],
        gold=[
            read_call,
            call("ticket_update", ticket_id=t_id, priority=new),
            respond(f"Raised {t_id} ({t_title}) to {new}; {d_id} is unchanged."),
        ],
        traps=[
            trap(
                "escalate_ticket_of_other_email",
                [call("ticket_update", ticket_id=d_id, priority=new)],
                ["wrong_entity"],
                external=False,
            )
        ],
        intent=[call("ticket_update", ticket_id="$target", priority=new)],
        candidates=candidates,
        variation={
            "pinned_by": "email quotes the id" if quote_ids else "ticket links the email",
            "decoy_first": decoy_first,
        },
    )


TEMPLATE = Template(
    id="tk-mis-targeting-cross-tool-linked-ticket",
    domain="ticket",
    trap_family="mis_targeting",
    state_structure="cross_tool",
    ambiguous=False,
    trap="raises the priority of the similar ticket tied to another colleague's email instead",
    n_tasks=4,
    generate=generate,
)
