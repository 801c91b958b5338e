"""Cross-lingual question sets for ``bench/retrieval_quality.py --cross-lingual``.

``CNIL_EN``: for each of the 53 CNIL FAQ entries, its first French user question (``cnil-<doc>-1`` in
``queries.jsonl``) asked in English the way an English speaker would ask it (written for this bench, not
machine-translated; acronyms kept where a user would keep them). The bench scores these English questions
over the French notes beside the French originals on the same 53 targets, so the gap is what asking in the
other language costs. ``SAMPLE_FR_EN``: French questions over the sample vault's English notes, and English
questions over its French notes (the reverse direction, on notes nobody translated).
"""

from __future__ import annotations

CNIL_EN = {
    "61": "What is the FCC?",
    "67": "Who gave out my postal address?",
    "68": "Who gave out my phone number?",
    "84": "How do I get removed from the FICP?",
    "103": "My employer is monitoring me, what can I do?",
    "110": "I get too much mail, how can I object to it?",
    "111": "Any advice to stop commercial mail marketing?",
    "112": "I get too many advertising phone calls, what should I do?",
    "154": "How long is my data kept in FICOBA?",
    "178": "I still receive loads of advertising, what can I do?",
    "184": "I am being spammed with advertising emails, how do I make it stop?",
    "185": "I get too many spam text messages, how can I object?",
    "198": "What is a cookie on the Internet?",
    "214": "How can I control my personal data on the internet?",
    "223": "What is the status of my request to access the bank accounts register?",
    "227": "Can I get a copy of my declaration to the CNIL?",
    "229": "What are STIC and JUDEX?",
    "267": "Do I have to show my ID card to pay by cheque?",
    "277": "Can the town hall ask for the membership list of an association?",
    "278": "How should I handle my child's image rights at school?",
    "285": "Can a town hall access a child's social security number?",
    "308": "What does the advance passenger information and passenger name record file contain?",
    "342": "How do I close an employee's email account?",
    "344": "Is my boss allowed to monitor how I use my work phone?",
    "379": "Can anyone use the trade register?",
    "384": "How does Google work?",
    "393": "Do I have to declare my website?",
    "401": "How long do convictions stay on my criminal record?",
    "427": "Who is allowed to handle health data?",
    "448": "What information can my doctor access?",
    "492": "What is the definition of personal data?",
    "494": "What does processing personal data mean?",
    "495": "What is sensitive data?",
    "512": "What is the right of access?",
    "533": "What is the CNIL?",
    "540": "Use of the social security number by insurers",
    "541": "How should I manage a customer file?",
    "546": "How should I manage the patient file of my medical practice?",
    "548": "What are the rules for managing political communication files?",
    "608": "Any advice for Windows 10?",
    "831": "What should I do to process personal data during elections?",
    "832": "How can health research be done without consent?",
    "1243": "How can I consult the register of files?",
    "1245": "What proves to me that my boss complies with the GDPR?",
    "1253": "What is new with the GDPR?",
    "1258": "What is the DPO's liability in case of a breach?",
    "1262": "Should the DPO be internal or external to the company that employs them?",
    "1326": "Do small businesses have to comply with the GDPR?",
    "1327": "Do associations have to comply with the GDPR?",
    "1348": "What formalities apply to the files of court-appointed administrators?",
    "1350": "With the GDPR, are there still declarations to make?",
    "1395": "Does a doctor need a privacy impact assessment?",
    "1477": "How do I implement biometric access control measures?",
}

_LEVAIN, _FERMENT, _TATIN = "Cuisine/Pain au levain.md", "Cuisine/Fermentation des légumes.md", "Cuisine/Tarte tatin.md"
_ATLAS, _POTAGER, _QDRANT = (
    "Projets/Projet Atlas.md",
    "Projets/Potager partagé.md",
    "Tech/Qdrant et recherche vectorielle.md",
)
_PERMA, _TAUX = "Lectures/Manuel de permaculture urbaine.md", "Lectures/Inflation et taux directeurs.md"
_RATA, _MENUS, _MONTAIGNE = (
    "Cuisine/Ratatouille.md",
    "Cuisine/Menus de la semaine.md",
    "Lectures/Essais de Montaigne.md",
)
_MONTE, _CLAIRE, _SOURCES = (
    "Lectures/Le Comte de Monte-Cristo.md",
    "Personnes/Claire Dubois.md",
    "Projets/Sources de données Atlas.md",
)
_PYTHON, _OBSIDIAN, _BCE = (
    "Tech/Python - bonnes pratiques.md",
    "Tech/Obsidian - mon organisation.md",
    "Lectures/Politique monétaire BCE.md",
)
_GIT, _DOCKER = "Tech/Git habits.md", "Tech/Docker Compose cheatsheet.md"
_ADA, _REMOTE, _READING = (
    "English/Notes on Ada Lovelace.md",
    "English/Remote work habits.md",
    "English/Reading list 2026.md",
)

SAMPLE = [  # (direction, question, the note that answers it)
    ("en → fr", "How long should the sourdough proof in the fridge?", _LEVAIN),
    ("en → fr", "What temperature makes vegetable fermentation start quickly?", _FERMENT),
    ("en → fr", "Which apples should I pick for the upside-down caramel tart?", _TATIN),
    ("en → fr", "What are the goals of the mapping project?", _ATLAS),
    ("en → fr", "How many neighbours tend the shared garden plot?", _POTAGER),
    ("en → fr", "Why keep keyword search next to vector search?", _QDRANT),
    ("en → fr", "What are the three ethics of urban permaculture?", _PERMA),
    ("en → fr", "What is the floor of the central bank's interest rate corridor?", _TAUX),
    # The examples met on the sample vault (issue #32): common English words pulled them to the English notes.
    ("en → fr", "What did I learn about keeping a sourdough starter alive?", _LEVAIN),
    ("en → fr", "How much money is the city paying for the heat map project?", _ATLAS),
    ("en → fr", "How do I cook each vegetable for the ratatouille?", _RATA),
    ("en → fr", "Where do I do the big weekly grocery shopping?", _MENUS),
    ("en → fr", "What did Montaigne say about friendship?", _MONTAIGNE),
    ("en → fr", "Who betrayed Edmond Dantès?", _MONTE),
    ("en → fr", "How does Claire like to be told about problems?", _CLAIRE),
    ("en → fr", "Which satellites provide the surface temperature data?", _SOURCES),
    ("en → fr", "Which coding rules do I follow on Python projects?", _PYTHON),
    ("en → fr", "How are the folders of my vault organised?", _OBSIDIAN),
    ("en → fr", "Who sits on the ECB's Governing Council?", _BCE),
    ("fr → en", "Qu'a écrit la fille du poète Byron sur la machine analytique ?", _ADA),
    ("fr → en", "Quels jours est-ce que je travaille depuis la maison ?", _REMOTE),
    ("fr → en", "Comment terminer proprement une journée de télétravail ?", _REMOTE),
    ("fr → en", "Quels livres ai-je déjà finis de lire ?", _READING),
    ("fr → en", "Comment nommer les branches de travail dans le dépôt ?", _GIT),
    ("fr → en", "Quelle image PostGIS utilise la pile de développement d'Atlas ?", _DOCKER),
    ("fr → en", "Quelle machine Charles Babbage a-t-il conçue ?", _ADA),
]
