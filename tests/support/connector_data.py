"""A French mailbox and calendar for the connectors' tests, dated around the day the test runs."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from email.message import EmailMessage
from email.utils import format_datetime

SENDERS = [
    ("Dr Martin", "cabinet.martin@dentiste.example"),
    ("Lucie Bernard", "lucie@atlas.example"),
    ("Banque Populaire", "info@banque.example"),
    ("Paul Girard", "paul.girard@example.fr"),
]
TOPICS = [
    ("Réunion du club de lecture", "Nous lirons « L'Étranger » de Camus pour la prochaine séance."),
    ("Facture d'électricité de novembre", "Votre facture s'élève à 84,20 euros, prélevée le 12."),
    ("Covoiturage vers Lyon", "Je pars vendredi à 7 h 30 de la gare de Grenoble, deux places libres."),
    ("Recette de la tarte aux poireaux", "Il faut trois poireaux, une pâte brisée et de la crème fraîche."),
    ("Inscription au semi-marathon", "Ton dossard porte le numéro 2417, retrait la veille au gymnase."),
    ("Location de vacances à Biarritz", "L'appartement est réservé du 3 au 17 août, caution de 500 euros."),
    ("Atelier de poterie", "La cuisson des bols aura lieu samedi, pense à les émailler avant."),
    ("Changement d'opérateur internet", "La fibre sera installée lundi entre 8 h et 12 h."),
    ("Assemblée générale de la copropriété", "Ordre du jour : ravalement de façade et budget 2027."),
    ("Plants de tomates", "Les variétés cœur de bœuf et noire de Crimée sont disponibles."),
    ("Cours de guitare", "Le cours de jeudi est déplacé à 19 h, salle B."),
    ("Livraison du canapé", "Le transporteur passera entre 14 h et 18 h mercredi."),
    ("Vaccin du chat", "Le rappel du vaccin de Minou est à prévoir avant fin janvier."),
    ("Photos du mariage", "Le photographe a déposé l'album sur le lien partagé."),
    ("Renouvellement du passeport", "Rendez-vous en mairie avec deux photos d'identité."),
    ("Abonnement à la médiathèque", "Ta carte expire le 31 décembre, renouvellement en ligne possible."),
]


def _message(sender: tuple[str, str], subject: str, text: str, sent: datetime) -> EmailMessage:
    message = EmailMessage()
    message["From"] = f"{sender[0]} <{sender[1]}>"
    message["To"] = "Camille <camille@example.fr>"
    message["Subject"] = subject
    message["Date"] = format_datetime(sent)
    message.set_content(f"Bonjour Camille,\n\n{text}\n\nBonne journée,\n{sender[0]}\n")
    return message


def french_mailbox(now: datetime) -> dict[str, EmailMessage]:
    """20 messages of the last two weeks, by name: ``dentist`` (the answer the user waits for), ``html`` (HTML
    only), ``attachment`` (a PDF quote joined), ``to_delete`` and sixteen others."""
    messages = {
        f"m{i}": _message(SENDERS[i % 4], subject, text, now - timedelta(days=i % 14 + 1, hours=i))
        for i, (subject, text) in enumerate(TOPICS)
    }
    messages["dentist"] = _message(
        SENDERS[0],
        "Re: rendez-vous détartrage",
        "Suite à votre demande, je vous confirme le rendez-vous pour le détartrage le 15 janvier à 9 h 30.",
        now - timedelta(days=2),
    )
    html = _message(SENDERS[1], "Compte rendu du point Atlas", "", now - timedelta(days=1))
    html.set_content(
        "<html><body><h1>Point Atlas</h1><p>Le <b>prototype du vélo cargo</b> passe les tests de freinage.</p>"
        "<p>Prochaine étape : commander les jantes renforcées.</p></body></html>",
        subtype="html",
    )
    messages["html"] = html
    quote = _message(SENDERS[3], "Devis de la toiture", "Voici le devis pour la réfection de la toiture.", now)
    quote.add_attachment(b"%PDF-1.4 devis", maintype="application", subtype="pdf", filename="devis-toiture.pdf")
    messages["attachment"] = quote
    messages["to_delete"] = _message(
        SENDERS[2], "Offre de carte premium", "Découvrez notre carte premium et ses avantages.", now - timedelta(days=3)
    )
    return messages


def nearest(weekday: int, today: date) -> date:
    """The day a bare weekday name means (services.language.dates: the nearest one, today included)."""
    ahead = (weekday - today.weekday()) % 7
    return today + timedelta(days=ahead if ahead <= 3 else ahead - 7)


def calendar_ics(today: date, tuesday: date) -> str:
    """A calendar: a weekly recurring meeting, an all-day event today, and the dentist then the Atlas
    meeting on ``tuesday`` (listed in the file in reverse order of their times)."""
    monday = today - timedelta(days=today.weekday())

    def stamp(day: date, at: time) -> str:
        return datetime.combine(day, at).strftime("%Y%m%dT%H%M%S")

    return "\r\n".join(
        [
            "BEGIN:VCALENDAR",
            "VERSION:2.0",
            "PRODID:-//ObsiRAG tests//FR",
            "X-WR-CALNAME:Perso",
            "BEGIN:VTIMEZONE",
            "TZID:Europe/Paris",
            "BEGIN:STANDARD",
            "DTSTART:19701025T030000",
            "RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU",
            "TZOFFSETFROM:+0200",
            "TZOFFSETTO:+0100",
            "END:STANDARD",
            "BEGIN:DAYLIGHT",
            "DTSTART:19700329T020000",
            "RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU",
            "TZOFFSETFROM:+0100",
            "TZOFFSETTO:+0200",
            "END:DAYLIGHT",
            "END:VTIMEZONE",
            "BEGIN:VEVENT",
            "UID:atlas-point@example.fr",
            f"DTSTART;TZID=Europe/Paris:{stamp(tuesday, time(14, 30))}",
            f"DTEND;TZID=Europe/Paris:{stamp(tuesday, time(15, 30))}",
            "SUMMARY:Point Atlas",
            "LOCATION:Salle Jura",
            "END:VEVENT",
            "BEGIN:VEVENT",
            "UID:dentiste@example.fr",
            f"DTSTART;TZID=Europe/Paris:{stamp(tuesday, time(10, 0))}",
            f"DTEND;TZID=Europe/Paris:{stamp(tuesday, time(10, 45))}",
            "SUMMARY:Dentiste",
            "DESCRIPTION:Détartrage chez le Dr Martin",
            "END:VEVENT",
            "BEGIN:VEVENT",
            "UID:yoga@example.fr",
            f"DTSTART;TZID=Europe/Paris:{stamp(monday - timedelta(days=14), time(18, 0))}",
            f"DTEND;TZID=Europe/Paris:{stamp(monday - timedelta(days=14), time(19, 0))}",
            "RRULE:FREQ=WEEKLY;COUNT=8",
            "SUMMARY:Cours de yoga",
            "END:VEVENT",
            "BEGIN:VEVENT",
            "UID:fete@example.fr",
            f"DTSTART;VALUE=DATE:{today:%Y%m%d}",
            f"DTEND;VALUE=DATE:{today + timedelta(days=1):%Y%m%d}",
            "SUMMARY:Fête des voisins",
            "END:VEVENT",
            "END:VCALENDAR",
            "",
        ]
    )
